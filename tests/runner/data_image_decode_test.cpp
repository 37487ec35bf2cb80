// Decoding PNG, JPEG, WebP and BMP files written by the test itself.
#include <gtest/gtest.h>

#include "data/exif_orientation.h"
#include "data/image_decode.h"
#include "data/image_tensor.h"
#include "data/image_transform.h"
#include "data_test_images.h"

using namespace sinter::data;
using namespace sinter::data::testing;

TEST(ImageDecode, LosslessFormatsDecodeExactly) {
  TempDir dir;
  const auto expected = makePixels(7, 5);
  for (const std::string name : {"a.png", "b.bmp", "c.webp", "D.PNG"}) {
    writeImage(dir / name, 7, 5);
    const RgbImage img = loadImageFile(dir / name);
    ASSERT_EQ(img.width, 7) << name;
    ASSERT_EQ(img.height, 5) << name;
    EXPECT_EQ(img.pixels, expected) << name;
    const ImageSize size = readImageSize(dir / name);
    EXPECT_EQ(size.width, 7);
    EXPECT_EQ(size.height, 5);
  }
}

TEST(ImageDecode, JpegDecodesClosely) {
  TempDir dir;
  writeImage(dir / "p.jpg", 32, 24);
  const RgbImage img = loadImageFile(dir / "p.jpg");
  ASSERT_EQ(img.width, 32);
  ASSERT_EQ(img.height, 24);
  const auto expected = makePixels(32, 24);
  double err = 0;
  for (size_t i = 0; i < expected.size(); ++i) err += std::abs(int(img.pixels[i]) - int(expected[i]));
  EXPECT_LT(err / expected.size(), 6.0);  // lossy, but the gradient survives
}

TEST(ImageDecode, AlphaIsDroppedNotComposited) {
  TempDir dir;
  for (const std::string name : {"rgba.png", "rgba.webp"}) {
    writeImage(dir / name, 4, 3, 4);
    const RgbImage img = loadImageFile(dir / name);
    const auto rgba = makePixels(4, 3, 4);
    // Pixel (1,0) is fully transparent; PIL's convert("RGB") keeps its colour.
    EXPECT_EQ(img.pixel(1, 0)[0], rgba[4 + 0]) << name;
    EXPECT_EQ(img.pixel(1, 0)[1], rgba[4 + 1]) << name;
  }
}

TEST(ImageDecode, GreyIsReplicated) {
  TempDir dir;
  const std::vector<std::uint8_t> grey = {0, 100, 200, 255};
  ASSERT_TRUE(stbi_write_png((dir / "g.png").c_str(), 2, 2, 1, grey.data(), 2));
  const RgbImage img = loadImageFile(dir / "g.png");
  EXPECT_EQ(img.pixel(1, 0)[0], 100);
  EXPECT_EQ(img.pixel(1, 0)[1], 100);
  EXPECT_EQ(img.pixel(1, 0)[2], 100);
}

TEST(ImageDecode, ErrorsNameTheFile) {
  TempDir dir;
  writeText(dir / "junk.png", "this is not an image");
  writeText(dir / "empty.jpg", "");
  writeImage(dir / "ok.png", 16, 16);
  std::string png;
  {
    std::ifstream in(dir / "ok.png", std::ios::binary);
    png.assign(std::istreambuf_iterator<char>(in), {});
  }
  writeText(dir / "truncated.png", png.substr(0, png.size() / 2));
  for (const std::string name : {"junk.png", "empty.jpg", "truncated.png", "missing.webp"}) {
    try {
      loadImageFile(dir / name);
      FAIL() << name << " decoded";
    } catch (const ImageError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
      EXPECT_EQ(e.path(), dir / name);
    }
  }
  EXPECT_THROW(readImageSize(dir / "junk.png"), ImageError);
}

TEST(ImageDecode, Extensions) {
  EXPECT_TRUE(hasImageExtension("a/b.PNG"));
  EXPECT_TRUE(hasImageExtension("x.jpeg"));
  EXPECT_TRUE(hasImageExtension("x.JpG"));
  EXPECT_TRUE(hasImageExtension("x.webp"));
  EXPECT_TRUE(hasImageExtension("x.bmp"));
  EXPECT_FALSE(hasImageExtension("x.txt"));
  EXPECT_FALSE(hasImageExtension("dir.png/file"));
  EXPECT_FALSE(hasImageExtension("x.gif"));
}

// A JPEG with an APP1 EXIF segment saying "rotate 90 degrees clockwise" (orientation 6).
TEST(ImageDecode, JpegExifOrientationIsApplied) {
  TempDir dir;
  writeImage(dir / "raw.jpg", 16, 8);
  std::string jpg;
  {
    std::ifstream in(dir / "raw.jpg", std::ios::binary);
    jpg.assign(std::istreambuf_iterator<char>(in), {});
  }
  // Little-endian TIFF: header, IFD0 with one entry (0x0112, SHORT, count 1, value 6).
  const std::string tiff("II*\0\x08\0\0\0\x01\0\x12\x01\x03\0\x01\0\0\0\x06\0\0\0\0\0\0\0", 26);
  const std::string payload = std::string("Exif\0\0", 6) + tiff;
  const size_t len = payload.size() + 2;
  std::string app1 = "\xFF\xE1";
  app1 += char(len >> 8);
  app1 += char(len & 0xFF);
  app1 += payload;
  const std::string rotated = jpg.substr(0, 2) + app1 + jpg.substr(2);
  writeText(dir / "rot.jpg", rotated);
  EXPECT_EQ(jpegExifOrientation(reinterpret_cast<const std::uint8_t*>(rotated.data()), rotated.size()), 6);
  const RgbImage img = loadImageFile(dir / "rot.jpg");
  EXPECT_EQ(img.width, 8);
  EXPECT_EQ(img.height, 16);
  const ImageSize size = readImageSize(dir / "rot.jpg");
  EXPECT_EQ(size.width, 8);
  EXPECT_EQ(size.height, 16);
  // The stored top-left marker (blue) ends up in the top-right corner.
  EXPECT_GT(img.pixel(7, 0)[2], 150);
  EXPECT_LT(img.pixel(0, 0)[2], 100);
}

TEST(ImageOrientation, AllEightAgreeWithTheirDefinition) {
  RgbImage in(3, 2);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) in.pixel(x, y)[0] = std::uint8_t(10 * y + x);
  // Where the stored top-left pixel (value 0) lands for each orientation, in the output's size.
  struct Case { int orientation, w, h, x0, y0; };
  for (const Case c : {Case{1, 3, 2, 0, 0}, Case{2, 3, 2, 2, 0}, Case{3, 3, 2, 2, 1}, Case{4, 3, 2, 0, 1},
                       Case{5, 2, 3, 0, 0}, Case{6, 2, 3, 1, 0}, Case{7, 2, 3, 1, 2}, Case{8, 2, 3, 0, 2}}) {
    const RgbImage out = applyExifOrientation(in, c.orientation);
    ASSERT_EQ(out.width, c.w) << c.orientation;
    ASSERT_EQ(out.height, c.h) << c.orientation;
    EXPECT_EQ(out.pixel(c.x0, c.y0)[0], 0) << c.orientation;
  }
}

TEST(ImageTensor, RangeLayoutAndRoundTrip) {
  RgbImage img(2, 1);
  img.pixel(0, 0)[0] = 0;
  img.pixel(0, 0)[1] = 255;
  img.pixel(1, 0)[2] = 51;
  const auto t = imageToTensor(img);
  ASSERT_EQ(t.sizes(), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_FLOAT_EQ(t[0][0][0].item<float>(), -1.0f);
  EXPECT_FLOAT_EQ(t[1][0][0].item<float>(), 1.0f);
  EXPECT_NEAR(t[2][0][1].item<float>(), 51 / 127.5 - 1, 1e-6);
  EXPECT_EQ(tensorToImage(t).pixels, img.pixels);
}

TEST(ImageTransform, ResizeCropFlip) {
  RgbImage img(4, 2);
  for (int x = 0; x < 4; ++x)
    for (int y = 0; y < 2; ++y) img.pixel(x, y)[0] = std::uint8_t(x * 60);
  const RgbImage flipped = flipHorizontal(img);
  EXPECT_EQ(flipped.pixel(0, 0)[0], 180);
  const RgbImage crop = cropImage(img, 1, 1, 2, 1);
  EXPECT_EQ(crop.width, 2);
  EXPECT_EQ(crop.pixel(0, 0)[0], 60);
  EXPECT_THROW(cropImage(img, 3, 0, 2, 1), std::invalid_argument);
  const RgbImage half = resizeImage(img, 2, 1);  // area: averages pairs
  EXPECT_NEAR(half.pixel(0, 0)[0], 30, 2);
  EXPECT_NEAR(half.pixel(1, 0)[0], 150, 2);
  const RgbImage big = resizeImage(img, 8, 4);
  EXPECT_EQ(big.width, 8);
  EXPECT_EQ(big.height, 4);
  EXPECT_EQ(resizeImage(img, 8, 4, ResizeFilter::Nearest).pixel(7, 3)[0], 180);
  EXPECT_THROW(resizeFilterFromString("cubic"), std::invalid_argument);
}

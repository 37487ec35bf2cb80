// color_aug as sd-scripts' AugHelper.color_aug does it: OpenCV's 8-bit HSV conversions on the RGB
// pixels read as BGR, the hue shift stored back truncated, v^γ on 0-255, and a third of the images
// changed, half of those by hue.
#include <gtest/gtest.h>

#include <cmath>

#include "data/color_augment.h"

using sinter::data::applyGamma;
using sinter::data::colorAugment;
using sinter::data::RgbImage;
using sinter::data::Rng;
using sinter::data::shiftHue;

namespace {

RgbImage onePixel(int a, int b, int c) {
  RgbImage img(1, 1);
  img.pixels = {static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b), static_cast<std::uint8_t>(c)};
  return img;
}

}  // namespace

TEST(ColorAugment, HueShiftFollowsOpenCvOnChannelsReadAsBgr) {
  // [255, 0, 0] is blue to cv2.COLOR_BGR2HSV (H 120); +30 is H 150, magenta: [255, 0, 255].
  RgbImage red = onePixel(255, 0, 0);
  shiftHue(red, 30);
  EXPECT_EQ(red.pixels, (std::vector<std::uint8_t>{255, 0, 255}));
  // cv2: BGR [0, 255, 255] is H 30 (yellow); +150 wraps to 0 (red): BGR [0, 0, 255].
  RgbImage yellow = onePixel(0, 255, 255);
  shiftHue(yellow, 150);
  EXPECT_EQ(yellow.pixels, (std::vector<std::uint8_t>{0, 0, 255}));
  // A grey has no saturation: no shift changes it.
  RgbImage grey = onePixel(90, 90, 90);
  shiftHue(grey, 7.5);
  EXPECT_EQ(grey.pixels, (std::vector<std::uint8_t>{90, 90, 90}));
  // A shift of 0 gives back each colour within the 8-bit HSV's rounding (a hue unit of 2° moves the
  // middle channel by up to 255 / 30; half of that).
  for (int r = 0; r < 256; r += 37)
    for (int g = 0; g < 256; g += 41)
      for (int b = 0; b < 256; b += 43) {
        RgbImage p = onePixel(r, g, b);
        shiftHue(p, 0);
        EXPECT_NEAR(p.pixels[0], r, 5);
        EXPECT_NEAR(p.pixels[1], g, 5);
        EXPECT_NEAR(p.pixels[2], b, 5);
      }
}

TEST(ColorAugment, GammaIsOnByteValuesClippedAndTruncated) {
  RgbImage img(3, 1);
  img.pixels = {0, 100, 255, 1, 200, 254, 50, 128, 17};
  applyGamma(img, 0.95);
  EXPECT_EQ(img.pixels[1], static_cast<std::uint8_t>(std::pow(100.0, 0.95)));  // 79.4 → 79
  EXPECT_EQ(img.pixels[2], static_cast<std::uint8_t>(std::pow(255.0, 0.95)));  // 193
  EXPECT_EQ(img.pixels[0], 0);
  EXPECT_EQ(img.pixels[3], 1);
  applyGamma(img, 1.05);
  EXPECT_EQ(img.pixels[2], static_cast<std::uint8_t>(std::min(255.0, std::pow(193.0, 1.05))));
  RgbImage white = onePixel(255, 255, 255);
  applyGamma(white, 1.049);
  EXPECT_EQ(white.pixels, (std::vector<std::uint8_t>{255, 255, 255}));  // 335 clipped
}

TEST(ColorAugment, AThirdOfTheImagesChangeHalfOfThemByHue) {
  int changed = 0, hueOnly = 0;
  const int n = 6000;
  for (int i = 0; i < n; ++i) {
    Rng rng(static_cast<std::uint64_t>(i) * 7919);
    RgbImage img = onePixel(200, 60, 30);
    colorAugment(img, rng);
    if (img.pixels != std::vector<std::uint8_t>{200, 60, 30}) {
      ++changed;
      // A hue shift keeps the largest value (HSV's V, read from channel 0 here); a gamma moves it.
      hueOnly += img.pixels[0] == 200 ? 1 : 0;
    }
  }
  EXPECT_NEAR(changed / static_cast<double>(n), 0.33, 0.03);
  EXPECT_NEAR(hueOnly / static_cast<double>(changed), 0.5, 0.05);
  // The same generator state gives the same picture.
  Rng a(42), b(42);
  RgbImage x = onePixel(10, 120, 240), y = onePixel(10, 120, 240);
  for (int i = 0; i < 20; ++i) colorAugment(x, a), colorAugment(y, b);
  EXPECT_EQ(x.pixels, y.pixels);
}

#pragma once
// Decoding training images (PNG, JPEG, WebP, BMP) into 8-bit RGB, as sd-scripts' load_image does
// with PIL's convert("RGB"): an alpha channel is dropped (not composited), grey is replicated.
// Unlike sd-scripts, a JPEG's EXIF orientation is applied, so the image is the way up a viewer
// shows it (PIL leaves it raw unless asked).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace sinter::data {

// Pixels in row-major HWC order, 3 bytes per pixel.
struct RgbImage {
  static constexpr int kChannels = 3;
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;

  RgbImage() = default;
  RgbImage(int w, int h) : width(w), height(h), pixels(static_cast<size_t>(w) * h * 3, 0) {}
  std::uint8_t* pixel(int x, int y) { return pixels.data() + (static_cast<size_t>(y) * width + x) * 3; }
  const std::uint8_t* pixel(int x, int y) const {
    return pixels.data() + (static_cast<size_t>(y) * width + x) * 3;
  }
};

// One 8-bit plane, row-major: an image's alpha channel or a loss mask (data/loss_mask.h).
struct GrayImage {
  static constexpr int kChannels = 1;
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;

  GrayImage() = default;
  GrayImage(int w, int h, std::uint8_t fill = 0) : width(w), height(h), pixels(static_cast<size_t>(w) * h, fill) {}
  std::uint8_t* pixel(int x, int y) { return pixels.data() + static_cast<size_t>(y) * width + x; }
  const std::uint8_t* pixel(int x, int y) const { return pixels.data() + static_cast<size_t>(y) * width + x; }
};

// Every problem reading an image: the message names the file.
class ImageError : public std::runtime_error {
 public:
  ImageError(const std::string& path, const std::string& what);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

enum class ImageFormat { Unknown, Png, Jpeg, WebP, Bmp };
const char* toString(ImageFormat f);

// The format from the file's first bytes (the extension is not trusted).
ImageFormat sniffImageFormat(const std::uint8_t* data, size_t size);

// True for .png .jpg .jpeg .webp .bmp in any letter case (sd-scripts' IMAGE_EXTENSIONS).
bool hasImageExtension(const std::string& path);

// Decodes bytes already in memory; `name` is used in error messages.
RgbImage decodeImage(const std::string& bytes, const std::string& name);
// Reads and decodes a file. Throws ImageError naming the path.
RgbImage loadImageFile(const std::string& path);
// The file's bytes, as loadImageFile reads them (to decode and look at them in one read). Throws
// ImageError naming the path.
std::string readImageBytes(const std::string& path);

// An image with its alpha channel, as sd-scripts' load_image(path, alpha=True) reads it with
// PIL's convert("RGBA"): a file without alpha gets an opaque one (255 everywhere).
struct RgbaImage {
  RgbImage rgb;
  GrayImage alpha;
};
RgbaImage decodeImageWithAlpha(const std::string& bytes, const std::string& name);
RgbaImage loadImageFileWithAlpha(const std::string& path);

struct ImageSize {
  int width = 0;
  int height = 0;
};
// The displayed size (after EXIF orientation) from the header only, without decoding pixels.
ImageSize readImageSize(const std::string& path);

}  // namespace sinter::data

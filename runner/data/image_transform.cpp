#include "data/image_transform.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <stb_image_resize.h>

namespace sinter::data {

ResizeFilter resizeFilterFromString(const std::string& name) {
  if (name.empty()) return ResizeFilter::Default;
  if (name == "area") return ResizeFilter::Area;
  if (name == "box") return ResizeFilter::Box;
  if (name == "lanczos" || name == "lanczos4") return ResizeFilter::Lanczos;
  if (name == "bicubic") return ResizeFilter::Bicubic;
  if (name == "bilinear") return ResizeFilter::Bilinear;
  if (name == "nearest") return ResizeFilter::Nearest;
  throw std::invalid_argument("unknown resize_interpolation '" + name +
                              "' (expected one of: lanczos, area, bilinear, bicubic, nearest, box)");
}

namespace {

template <typename Image>
Image resizeNearest(const Image& in, int width, int height) {
  constexpr int c = Image::kChannels;
  Image out(width, height);
  for (int y = 0; y < height; ++y) {
    const int sy = std::min(in.height - 1, static_cast<int>((y + 0.5) * in.height / height));
    for (int x = 0; x < width; ++x) {
      const int sx = std::min(in.width - 1, static_cast<int>((x + 0.5) * in.width / width));
      std::memcpy(out.pixel(x, y), in.pixel(sx, sy), c);
    }
  }
  return out;
}

stbir_filter stbFilterFor(ResizeFilter f) {
  switch (f) {
    case ResizeFilter::Area:
    case ResizeFilter::Box: return STBIR_FILTER_BOX;
    case ResizeFilter::Bilinear: return STBIR_FILTER_TRIANGLE;
    case ResizeFilter::Lanczos:
    case ResizeFilter::Bicubic: return STBIR_FILTER_CATMULLROM;
    default: return STBIR_FILTER_DEFAULT;
  }
}

template <typename Image>
Image resizeAny(const Image& in, int width, int height, ResizeFilter filter) {
  constexpr int c = Image::kChannels;
  if (width <= 0 || height <= 0) throw std::invalid_argument("resizeImage: target size must be positive");
  if (width == in.width && height == in.height) return in;
  if (filter == ResizeFilter::Default)
    filter = (in.width >= width && in.height >= height) ? ResizeFilter::Area : ResizeFilter::Lanczos;
  if (filter == ResizeFilter::Nearest) return resizeNearest(in, width, height);
  Image out(width, height);
  const stbir_filter f = stbFilterFor(filter);
  // Linear colour space and clamped edges, as OpenCV and PIL treat 8-bit images.
  const int ok = stbir_resize_uint8_generic(in.pixels.data(), in.width, in.height, in.width * c, out.pixels.data(),
                                            width, height, width * c, c, STBIR_ALPHA_CHANNEL_NONE, 0,
                                            STBIR_EDGE_CLAMP, f, STBIR_COLORSPACE_LINEAR, nullptr);
  if (!ok) throw std::runtime_error("resizeImage: stb_image_resize failed");
  return out;
}

template <typename Image>
Image cropAny(const Image& in, int left, int top, int width, int height) {
  if (left < 0 || top < 0 || width <= 0 || height <= 0 || left + width > in.width || top + height > in.height)
    throw std::invalid_argument("cropImage: region outside the image");
  Image out(width, height);
  for (int y = 0; y < height; ++y)
    std::memcpy(out.pixel(0, y), in.pixel(left, top + y), size_t(width) * Image::kChannels);
  return out;
}

template <typename Image>
Image flipAny(const Image& in) {
  Image out(in.width, in.height);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) std::memcpy(out.pixel(x, y), in.pixel(in.width - 1 - x, y), Image::kChannels);
  return out;
}

}  // namespace

RgbImage resizeImage(const RgbImage& in, int width, int height, ResizeFilter filter) {
  return resizeAny(in, width, height, filter);
}
GrayImage resizeImage(const GrayImage& in, int width, int height, ResizeFilter filter) {
  return resizeAny(in, width, height, filter);
}
RgbImage cropImage(const RgbImage& in, int left, int top, int width, int height) {
  return cropAny(in, left, top, width, height);
}
GrayImage cropImage(const GrayImage& in, int left, int top, int width, int height) {
  return cropAny(in, left, top, width, height);
}
RgbImage flipHorizontal(const RgbImage& in) { return flipAny(in); }
GrayImage flipHorizontal(const GrayImage& in) { return flipAny(in); }

}  // namespace sinter::data

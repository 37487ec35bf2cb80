#include "data/image_decode.h"

#include <webp/decode.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <memory>

#include "data/exif_orientation.h"
#include "data/png_chunks.h"

#define STBI_NO_STDIO
#include <stb_image.h>

namespace sinter::data {

ImageError::ImageError(const std::string& path, const std::string& what)
    : std::runtime_error(path + ": " + what), path_(path) {}

const char* toString(ImageFormat f) {
  switch (f) {
    case ImageFormat::Png: return "PNG";
    case ImageFormat::Jpeg: return "JPEG";
    case ImageFormat::WebP: return "WebP";
    case ImageFormat::Bmp: return "BMP";
    case ImageFormat::Unknown: break;
  }
  return "unknown";
}

ImageFormat sniffImageFormat(const std::uint8_t* d, size_t n) {
  if (n >= 8 && std::memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0) return ImageFormat::Png;
  if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return ImageFormat::Jpeg;
  if (n >= 12 && std::memcmp(d, "RIFF", 4) == 0 && std::memcmp(d + 8, "WEBP", 4) == 0) return ImageFormat::WebP;
  if (n >= 2 && d[0] == 'B' && d[1] == 'M') return ImageFormat::Bmp;
  return ImageFormat::Unknown;
}

bool hasImageExtension(const std::string& path) {
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return false;
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".webp" || ext == ".bmp";
}

namespace {

std::string readFile(const std::string& path, size_t maxBytes = std::string::npos) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImageError(path, std::string("cannot open: ") + std::strerror(errno));
  std::string bytes;
  if (maxBytes == std::string::npos) {
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    bytes.resize(maxBytes);
    in.read(bytes.data(), static_cast<std::streamsize>(maxBytes));
    bytes.resize(static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw ImageError(path, "read error");
  return bytes;
}

const std::uint8_t* bytesOf(const std::string& s) { return reinterpret_cast<const std::uint8_t*>(s.data()); }

// RGBA bytes (4 per pixel) into the colour image and its alpha plane.
RgbaImage splitRgba(const std::uint8_t* rgba, int w, int h) {
  RgbaImage out{RgbImage(w, h), GrayImage(w, h)};
  const size_t n = static_cast<size_t>(w) * h;
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(out.rgb.pixels.data() + i * 3, rgba + i * 4, 3);
    out.alpha.pixels[i] = rgba[i * 4 + 3];
  }
  return out;
}

RgbImage decodeWithStb(const std::string& bytes, const std::string& name) {
  int w = 0, h = 0, channelsInFile = 0;
  // Asking for 3 channels drops alpha and replicates grey, as PIL's convert("RGB") does.
  std::unique_ptr<stbi_uc, void (*)(void*)> data(
      stbi_load_from_memory(bytesOf(bytes), static_cast<int>(bytes.size()), &w, &h, &channelsInFile, 3),
      stbi_image_free);
  if (!data) throw ImageError(name, std::string("cannot decode image: ") + stbi_failure_reason());
  RgbImage img(w, h);
  std::memcpy(img.pixels.data(), data.get(), img.pixels.size());
  return img;
}

// The same with the alpha channel kept (an opaque one for files without alpha).
RgbaImage decodeWithStbAlpha(const std::string& bytes, const std::string& name) {
  int w = 0, h = 0, channelsInFile = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> data(
      stbi_load_from_memory(bytesOf(bytes), static_cast<int>(bytes.size()), &w, &h, &channelsInFile, 4),
      stbi_image_free);
  if (!data) throw ImageError(name, std::string("cannot decode image: ") + stbi_failure_reason());
  return splitRgba(data.get(), w, h);
}

RgbImage decodeWebP(const std::string& bytes, const std::string& name) {
  int w = 0, h = 0;
  std::unique_ptr<std::uint8_t, void (*)(void*)> data(WebPDecodeRGB(bytesOf(bytes), bytes.size(), &w, &h),
                                                       WebPFree);
  if (!data) throw ImageError(name, "cannot decode WebP image (corrupt or unsupported)");
  RgbImage img(w, h);
  std::memcpy(img.pixels.data(), data.get(), img.pixels.size());
  return img;
}

RgbaImage decodeWebPAlpha(const std::string& bytes, const std::string& name) {
  int w = 0, h = 0;
  std::unique_ptr<std::uint8_t, void (*)(void*)> data(WebPDecodeRGBA(bytesOf(bytes), bytes.size(), &w, &h),
                                                       WebPFree);
  if (!data) throw ImageError(name, "cannot decode WebP image (corrupt or unsupported)");
  return splitRgba(data.get(), w, h);
}

}  // namespace

RgbImage decodeImage(const std::string& bytes, const std::string& name) {
  if (bytes.empty()) throw ImageError(name, "empty file");
  const ImageFormat format = sniffImageFormat(bytesOf(bytes), bytes.size());
  switch (format) {
    case ImageFormat::Png:
    case ImageFormat::Bmp:
      return decodeWithStb(bytes, name);
    case ImageFormat::Jpeg: {
      RgbImage stored = decodeWithStb(bytes, name);
      return applyExifOrientation(stored, jpegExifOrientation(bytesOf(bytes), bytes.size()));
    }
    case ImageFormat::WebP:
      return decodeWebP(bytes, name);
    case ImageFormat::Unknown:
      break;
  }
  throw ImageError(name, "not a PNG, JPEG, WebP or BMP image");
}

RgbImage loadImageFile(const std::string& path) { return decodeImage(readFile(path), path); }

std::string readImageBytes(const std::string& path) { return readFile(path); }

RgbaImage decodeImageWithAlpha(const std::string& bytes, const std::string& name) {
  if (bytes.empty()) throw ImageError(name, "empty file");
  switch (sniffImageFormat(bytesOf(bytes), bytes.size())) {
    case ImageFormat::Png:
    case ImageFormat::Bmp:
      return decodeWithStbAlpha(bytes, name);
    case ImageFormat::WebP:
      return decodeWebPAlpha(bytes, name);
    case ImageFormat::Jpeg: {  // no alpha in JPEG: opaque, after the EXIF orientation
      RgbaImage out;
      out.rgb = decodeImage(bytes, name);
      out.alpha = GrayImage(out.rgb.width, out.rgb.height, 255);
      return out;
    }
    case ImageFormat::Unknown:
      break;
  }
  throw ImageError(name, "not a PNG, JPEG, WebP or BMP image");
}

RgbaImage loadImageFileWithAlpha(const std::string& path) { return decodeImageWithAlpha(readFile(path), path); }

ImageSize readImageSize(const std::string& path) {
  // Headers sit at the start, but a JPEG's size comes after its EXIF block (thumbnails included),
  // so read a generous prefix first and the whole file only when that was not enough. A PNG is
  // read whole: its chunks' CRCs are checked (png_chunks.h).
  constexpr size_t kPrefix = 256 * 1024;
  std::string bytes = readFile(path, kPrefix);
  if (sniffImageFormat(bytesOf(bytes), bytes.size()) == ImageFormat::Png) {
    if (bytes.size() == kPrefix) bytes = readFile(path);
    if (const std::string problem = pngChunkProblem(bytesOf(bytes), bytes.size()); !problem.empty()) throw ImageError(path, problem);
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    const ImageFormat format = sniffImageFormat(bytesOf(bytes), bytes.size());
    int w = 0, h = 0, comp = 0;
    bool ok = false;
    if (format == ImageFormat::WebP) {
      ok = WebPGetInfo(bytesOf(bytes), bytes.size(), &w, &h) != 0;
    } else if (format != ImageFormat::Unknown) {
      ok = stbi_info_from_memory(bytesOf(bytes), static_cast<int>(bytes.size()), &w, &h, &comp) != 0;
    } else {
      throw ImageError(path, bytes.empty() ? "empty file" : "not a PNG, JPEG, WebP or BMP image");
    }
    if (ok && w > 0 && h > 0) {
      if (format == ImageFormat::Jpeg && orientationSwapsAxes(jpegExifOrientation(bytesOf(bytes), bytes.size())))
        std::swap(w, h);
      return {w, h};
    }
    if (bytes.size() < kPrefix) break;  // the whole file was read already
    bytes = readFile(path);
  }
  throw ImageError(path, "cannot read the image size (corrupt or truncated header)");
}

}  // namespace sinter::data

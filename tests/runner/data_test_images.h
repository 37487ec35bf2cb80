#pragma once
// Test images written at test time (no binary fixtures): stb_image_write for PNG/BMP/JPEG,
// libwebp's encoder for WebP, into a fresh temporary folder.
#include <webp/encode.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "temp_dir.h"

namespace sinter::data::testing {

namespace fs = std::filesystem;

using sinter::test::TempDir;

// A gradient with a marker in the top-left corner, so orientation and crops can be checked.
inline std::vector<std::uint8_t> makePixels(int w, int h, int channels = 3) {
  std::vector<std::uint8_t> px(size_t(w) * h * channels);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      std::uint8_t* p = &px[(size_t(y) * w + x) * channels];
      p[0] = std::uint8_t(x * 255 / std::max(1, w - 1));
      p[1] = std::uint8_t(y * 255 / std::max(1, h - 1));
      p[2] = (x < 2 && y < 2) ? 255 : 0;
      if (channels == 4) p[3] = std::uint8_t(x % 2 ? 0 : 255);
    }
  return px;
}

// Lossless, keeping the colour under transparent pixels (the simple API would zero it).
inline int writeWebP(const std::string& path, const std::vector<std::uint8_t>& px, int w, int h, int channels) {
  WebPConfig config;
  WebPPicture pic;
  if (!WebPConfigInit(&config) || !WebPPictureInit(&pic)) return 0;
  config.lossless = 1;
  config.exact = 1;
  pic.use_argb = 1;
  pic.width = w;
  pic.height = h;
  WebPMemoryWriter writer;
  WebPMemoryWriterInit(&writer);
  pic.writer = WebPMemoryWrite;
  pic.custom_ptr = &writer;
  const int imported = channels == 4 ? WebPPictureImportRGBA(&pic, px.data(), w * 4)
                                     : WebPPictureImportRGB(&pic, px.data(), w * 3);
  const int ok = imported && WebPEncode(&config, &pic);
  if (ok) std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(writer.mem), std::streamsize(writer.size));
  WebPPictureFree(&pic);
  WebPMemoryWriterClear(&writer);
  return ok;
}

inline void writeImage(const std::string& path, int w, int h, int channels = 3) {
  const auto px = makePixels(w, h, channels);
  const auto ext = fs::path(path).extension().string();
  int ok = 0;
  if (ext == ".png" || ext == ".PNG") ok = stbi_write_png(path.c_str(), w, h, channels, px.data(), w * channels);
  else if (ext == ".bmp" || ext == ".BMP") ok = stbi_write_bmp(path.c_str(), w, h, channels, px.data());
  else if (ext == ".jpg" || ext == ".jpeg" || ext == ".JPG") ok = stbi_write_jpg(path.c_str(), w, h, channels, px.data(), 95);
  else if (ext == ".webp" || ext == ".WEBP") ok = writeWebP(path, px, w, h, channels);
  if (!ok) throw std::runtime_error("test could not write " + path);
}

inline void writeText(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace sinter::data::testing

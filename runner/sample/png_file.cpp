#include "sample/png_file.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/atomic_file.h"

// stb's encoder compiled privately here, for its in-memory PNG and the CRC the text chunks need.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include <stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace sinter::sample {

namespace {

bool isAscii(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

// One chunk: length, type, data, CRC of type and data (big-endian numbers).
std::string chunk(const char type[4], const std::string& data) {
  auto bigEndian = [](unsigned v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  std::string typed = std::string(type, 4) + data;
  const unsigned crc = stbiw__crc32(reinterpret_cast<unsigned char*>(typed.data()), static_cast<int>(typed.size()));
  return bigEndian(static_cast<unsigned>(data.size())) + typed + bigEndian(crc);
}

std::string textChunk(const std::string& keyword, const std::string& text, const std::string& path) {
  if (keyword.empty() || keyword.size() > 79 || keyword.find('\0') != std::string::npos || !isAscii(keyword))
    throw std::runtime_error(path + ": PNG text keyword '" + keyword + "' is not 1-79 Latin characters");
  // iTXt: keyword, no compression, no language tag or translated keyword, then UTF-8 text.
  if (isAscii(text)) return chunk("tEXt", keyword + std::string(1, '\0') + text);
  return chunk("iTXt", keyword + std::string(1, '\0') + std::string(2, '\0') + std::string(1, '\0') + std::string(1, '\0') + text);
}

}  // namespace

void writePng(const std::string& path, const torch::Tensor& rgb, const PngText& text) {
  if (rgb.dim() != 3 || rgb.size(2) != 3 || rgb.scalar_type() != torch::kUInt8 || !rgb.device().is_cpu())
    throw std::runtime_error(path + ": writePng needs a [H, W, 3] uint8 CPU image, got " + c10::str(rgb.sizes()));
  const torch::Tensor pixels = rgb.contiguous();
  const int h = static_cast<int>(pixels.size(0)), w = static_cast<int>(pixels.size(1));
  int length = 0;
  unsigned char* png = stbi_write_png_to_mem(pixels.data_ptr<uint8_t>(), w * 3, w, h, 3, &length);
  if (!png) throw std::runtime_error(path + ": the PNG encoder failed");
  std::string bytes(reinterpret_cast<char*>(png), static_cast<size_t>(length));
  STBIW_FREE(png);
  // The text goes right after IHDR (8 bytes of signature, then IHDR's 25).
  constexpr size_t afterHeader = 8 + 25;
  std::string chunks;
  for (const auto& [keyword, value] : text) chunks += textChunk(keyword, value, path);
  bytes.insert(afterHeader, chunks);
  writeFileAtomically(path, bytes);
}

PngText readPngText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) throw std::runtime_error(path + ": not a PNG file");
  auto number = [&](size_t at) {
    return (static_cast<unsigned>(static_cast<unsigned char>(bytes[at])) << 24) |
           (static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 1])) << 16) |
           (static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 2])) << 8) | static_cast<unsigned char>(bytes[at + 3]);
  };
  PngText text;
  for (size_t at = 8; at + 12 <= bytes.size();) {
    const size_t length = number(at);
    if (length > bytes.size() - at - 12) throw std::runtime_error(path + ": a PNG chunk runs past the end of the file");
    const std::string type = bytes.substr(at + 4, 4), data = bytes.substr(at + 8, length);
    at += 12 + length;
    const size_t nul = data.find('\0');
    if (nul == std::string::npos) continue;
    if (type == "tEXt") text.emplace_back(data.substr(0, nul), data.substr(nul + 1));
    // iTXt: keyword \0, compression flag and method, language \0, translated keyword \0, text.
    if (type == "iTXt" && nul + 2 < data.size() && data[nul + 1] == '\0') {
      const size_t language = data.find('\0', nul + 3);
      const size_t translated = language == std::string::npos ? language : data.find('\0', language + 1);
      if (translated != std::string::npos) text.emplace_back(data.substr(0, nul), data.substr(translated + 1));
    }
    if (type == "IEND") break;
  }
  return text;
}

torch::Tensor imageToRgb8(const torch::Tensor& decoded) {
  const torch::Tensor unit = ((decoded.detach().to(torch::kCPU, torch::kFloat32)[0] / 2.0 + 0.5).clamp(0.0, 1.0));
  return (unit * 255.0).round().to(torch::kUInt8).permute({1, 2, 0}).contiguous();
}

}  // namespace sinter::sample

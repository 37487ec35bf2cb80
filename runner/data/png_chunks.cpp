#include "data/png_chunks.h"

#include <array>

namespace sinter::data {

namespace {

// CRC-32 as PNG defines it (ISO 3309 / ITU-T V.42, polynomial 0xEDB88320 reflected).
const std::array<std::uint32_t, 256>& crcTable() {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  return table;
}

std::uint32_t crc32(const std::uint8_t* data, size_t n) {
  const auto& table = crcTable();
  std::uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::uint32_t bigEndian32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

}  // namespace

std::string pngChunkProblem(const std::uint8_t* bytes, size_t size) {
  constexpr size_t kSignature = 8;
  size_t at = kSignature;
  while (at + 12 <= size) {
    const std::uint32_t length = bigEndian32(bytes + at);
    const std::string type(reinterpret_cast<const char*>(bytes + at + 4), 4);
    if (length > size - at - 12)
      return "damaged PNG: chunk " + type + " at byte " + std::to_string(at) + " runs past the end of the file (truncated?)";
    const std::uint32_t stored = bigEndian32(bytes + at + 8 + length);
    if (crc32(bytes + at + 4, 4 + length) != stored)
      return "damaged PNG: chunk " + type + " at byte " + std::to_string(at) + " fails its CRC check";
    if (type == "IEND") return "";
    at += 12 + length;
  }
  return "damaged PNG: it ends before its IEND chunk (truncated?)";
}

}  // namespace sinter::data

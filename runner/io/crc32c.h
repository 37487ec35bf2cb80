#pragma once
// CRC-32C (Castagnoli), the checksum of TFRecord files (TensorBoard's event files), and the mask
// TFRecord applies to every stored CRC (a CRC of data that itself holds CRCs is weak otherwise).
#include <cstddef>
#include <cstdint>
#include <string>

namespace sinter::io {

// CRC-32C of `size` bytes at `data` (reflected polynomial 0x82F63B78, initial and final xor ~0).
std::uint32_t crc32c(const void* data, std::size_t size);
inline std::uint32_t crc32c(const std::string& bytes) { return crc32c(bytes.data(), bytes.size()); }

// TFRecord's masked form of a CRC: rotated right by 15 bits, plus 0xa282ead8.
std::uint32_t maskCrc32c(std::uint32_t crc);

}  // namespace sinter::io

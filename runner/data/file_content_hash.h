#pragma once
// A 64-bit hash of a file's bytes, to find files of the same content (the dataset check's
// duplicates). Not kept anywhere: it only has to agree with itself within one process.
#include <cstddef>
#include <cstdint>
#include <string>

namespace sinter::data {

class ContentHasher {
 public:
  void update(const char* data, size_t size);
  std::uint64_t digest() const;

 private:
  void mixBlock(const unsigned char* block);  // kBlockBytes of input into the lanes
  static constexpr size_t kBlockBytes = 32;
  // Four lanes, each fed every fourth word, so the multiplications of a block run side by side.
  std::uint64_t lanes_[4] = {0x243F6A8885A308D3ULL, 0x13198A2E03707344ULL, 0xA4093822299F31D0ULL, 0x082EFA98EC4E6C89ULL};
  unsigned char pending_[kBlockBytes] = {};
  size_t pendingBytes_ = 0;
  std::uint64_t totalBytes_ = 0;
};

std::uint64_t contentHashOf(const std::string& bytes);
// Reads the file in pieces. Throws std::runtime_error naming the path when it cannot be read.
std::uint64_t contentHashOfFile(const std::string& path);

}  // namespace sinter::data

#include "data/file_content_hash.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace sinter::data {

namespace {

constexpr std::uint64_t kOddA = 0x9E3779B97F4A7C15ULL;  // 2^64 / golden ratio
constexpr std::uint64_t kOddB = 0xD6E8FEB86659FD93ULL;

std::uint64_t rotateLeft(std::uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

// Spreads every input bit over the whole word (a multiply moves bits up, the shifts bring them down).
std::uint64_t avalanche(std::uint64_t x) {
  x ^= x >> 32;
  x *= kOddB;
  x ^= x >> 29;
  x *= kOddA;
  x ^= x >> 32;
  return x;
}

std::uint64_t wordAt(const unsigned char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

}  // namespace

void ContentHasher::mixBlock(const unsigned char* block) {
  for (int lane = 0; lane < 4; ++lane) {
    const std::uint64_t w = wordAt(block + 8 * lane) * kOddB;
    lanes_[lane] = rotateLeft(lanes_[lane] ^ rotateLeft(w, 31), 27) * kOddA;
  }
}

void ContentHasher::update(const char* data, size_t size) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  totalBytes_ += size;
  if (pendingBytes_ > 0) {
    const size_t take = std::min(size, kBlockBytes - pendingBytes_);
    std::memcpy(pending_ + pendingBytes_, p, take);
    pendingBytes_ += take;
    p += take;
    size -= take;
    if (pendingBytes_ < kBlockBytes) return;
    mixBlock(pending_);
    pendingBytes_ = 0;
  }
  for (; size >= kBlockBytes; p += kBlockBytes, size -= kBlockBytes) mixBlock(p);
  std::memcpy(pending_, p, size);
  pendingBytes_ = size;
}

std::uint64_t ContentHasher::digest() const {
  // The last partial block, zero-padded; the length tells "ab" from "ab\0".
  unsigned char last[kBlockBytes] = {};
  std::memcpy(last, pending_, pendingBytes_);
  ContentHasher rest = *this;
  if (pendingBytes_ > 0) rest.mixBlock(last);
  std::uint64_t h = totalBytes_ * kOddA;
  for (int lane = 0; lane < 4; ++lane) h = rotateLeft(h ^ avalanche(rest.lanes_[lane] + static_cast<std::uint64_t>(lane)), 23) * kOddB;
  return avalanche(h);
}

std::uint64_t contentHashOf(const std::string& bytes) {
  ContentHasher hasher;
  hasher.update(bytes.data(), bytes.size());
  return hasher.digest();
}

std::uint64_t contentHashOfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  ContentHasher hasher;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hasher.update(buffer.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw std::runtime_error(path + ": read error");
  return hasher.digest();
}

}  // namespace sinter::data

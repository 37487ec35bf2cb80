#include "data/shuffled_index.h"

#include "data/random.h"

namespace sinter::data {

ShuffledIndex::ShuffledIndex(std::uint64_t n, std::uint64_t seed) : n_(n) {
  // At least 2 bits per half, so that even a tiny n is shuffled by real rounds.
  halfBits_ = 2;
  while (halfBits_ < 32 && (std::uint64_t{1} << (2 * halfBits_)) < n) ++halfBits_;
  for (int r = 0; r < 4; ++r) keys_[r] = deriveSeed(seed, static_cast<std::uint64_t>(r), 0x5eedULL);
}

std::uint64_t ShuffledIndex::permuteDomain(std::uint64_t x) const {
  const std::uint64_t mask = (std::uint64_t{1} << halfBits_) - 1;
  std::uint64_t left = x >> halfBits_, right = x & mask;
  for (const std::uint64_t key : keys_) {
    const std::uint64_t next = left ^ (mix64(right ^ key) & mask);
    left = right;
    right = next;
  }
  return (left << halfBits_) | right;
}

std::uint64_t ShuffledIndex::at(std::uint64_t i) const {
  // Cycle walking: a bijection of the domain, applied until it lands in [0, n), is one of [0, n).
  // The domain is under 4n (for n > 16), so a few applications do on average.
  std::uint64_t x = permuteDomain(i);
  while (x >= n_) x = permuteDomain(x);
  return x;
}

}  // namespace sinter::data

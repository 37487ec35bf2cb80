#pragma once
// A shuffled order of n items that is computed one position at a time, never listed: a bijection
// of [0, n) drawn from a seed (a four-round Feistel network on the smallest power-of-two square
// domain that holds n, walking cycles back into [0, n)). An epoch of a subset repeated a million
// times is shuffled this way in constant memory (batch_plan.h).
#include <cstdint>

namespace sinter::data {

class ShuffledIndex {
 public:
  ShuffledIndex(std::uint64_t n, std::uint64_t seed);
  // The item at position `i` (< n) of the shuffled order; every item appears at exactly one position.
  std::uint64_t at(std::uint64_t i) const;
  std::uint64_t size() const { return n_; }

 private:
  std::uint64_t permuteDomain(std::uint64_t x) const;
  std::uint64_t n_;
  int halfBits_ = 0;  // the domain is 2^(2 * halfBits_) values
  std::uint64_t keys_[4];
};

}  // namespace sinter::data

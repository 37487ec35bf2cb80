#pragma once
// A small deterministic random generator whose whole state is one integer, so a run's data order
// and augmentations can be saved and resumed exactly, and derived per (seed, epoch, item) so the
// result does not depend on how many worker threads produce it.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sinter::data {

// splitmix64's finaliser: a good 64-bit mix of one value.
inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A seed for one purpose, from the run's seed and the coordinates of what it decides.
inline std::uint64_t deriveSeed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) {
  std::uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ULL);
  h = mix64(h ^ (a + 0x632be59bd9b4e019ULL));
  h = mix64(h ^ (b + 0x85157af5ULL));
  return mix64(h ^ (c + 0x2545f4914f6cdd1dULL));
}

class Rng {
 public:
  explicit Rng(std::uint64_t state = 0) : state_(state) {}
  std::uint64_t state() const { return state_; }

  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }
  // Uniform in [0, 1), 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  // Uniform integer in [lo, hi], both inclusive (like Python's random.randint).
  long long uniformInt(long long lo, long long hi) {
    const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
    if (span == 0) return static_cast<long long>(next());
    // Rejection keeps it unbiased.
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    std::uint64_t r;
    do r = next();
    while (r >= limit);
    return lo + static_cast<long long>(r % span);
  }
  // Fisher-Yates, like Python's random.shuffle.
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<size_t>(uniformInt(0, i - 1))]);
  }

 private:
  std::uint64_t state_;
};

}  // namespace sinter::data

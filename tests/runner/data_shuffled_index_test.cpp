// The shuffled order computed one position at a time (batch plans' shuffles), and PNG chunk CRCs.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "data/png_chunks.h"
#include "data/shuffled_index.h"

using namespace sinter::data;

TEST(ShuffledIndex, IsAPermutationOfEverySize) {
  for (std::uint64_t n : {1ULL, 2ULL, 3ULL, 5ULL, 16ULL, 17ULL, 100ULL, 1000ULL, 4097ULL}) {
    const ShuffledIndex order(n, 42);
    std::set<std::uint64_t> seen;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t x = order.at(i);
      ASSERT_LT(x, n) << "n " << n;
      seen.insert(x);
    }
    EXPECT_EQ(seen.size(), n) << "every item once, n " << n;
  }
}

TEST(ShuffledIndex, DependsOnTheSeedAndShuffles) {
  const std::uint64_t n = 1000;
  const ShuffledIndex a(n, 1), b(n, 1), c(n, 2);
  size_t same = 0, fixedPoints = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    EXPECT_EQ(a.at(i), b.at(i));
    same += a.at(i) == c.at(i);
    fixedPoints += a.at(i) == i;
  }
  // A random permutation has about one fixed point, and two agree at about one position.
  EXPECT_LT(same, 20u);
  EXPECT_LT(fixedPoints, 20u);
  // Positions far beyond what a list could hold cost nothing.
  const ShuffledIndex huge(40'000'000'000ULL, 7);
  EXPECT_LT(huge.at(39'999'999'999ULL), 40'000'000'000ULL);
}

namespace {

// A minimal PNG's bytes: signature, IHDR (1x1 grey), IDAT, IEND, with correct CRCs.
std::string minimalPng() {
  const unsigned char bytes[] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A,
                                 0, 0, 0, 13, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0, 0x3A, 0x7E, 0x9B, 0x55,
                                 0, 0, 0, 10, 'I', 'D', 'A', 'T', 0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01,
                                 0x48, 0xAF, 0xA4, 0x71,
                                 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
  return std::string(reinterpret_cast<const char*>(bytes), sizeof bytes);
}

std::string problemOf(const std::string& png) {
  return pngChunkProblem(reinterpret_cast<const std::uint8_t*>(png.data()), png.size());
}

}  // namespace

TEST(PngChunks, ACorrectFilePassesAndADamagedOneIsNamed) {
  const std::string good = minimalPng();
  EXPECT_EQ(problemOf(good), "");
  std::string damaged = good;
  damaged[41 + 2] ^= 0x01;  // a byte of IDAT's data
  EXPECT_EQ(problemOf(damaged), "damaged PNG: chunk IDAT at byte 33 fails its CRC check");
  EXPECT_NE(problemOf(good.substr(0, 50)).find("IDAT"), std::string::npos) << problemOf(good.substr(0, 50));
  EXPECT_NE(problemOf(good.substr(0, good.size() - 12)).find("before its IEND"), std::string::npos);
}

// Caption processing rules (sd-scripts' process_caption) with a seeded generator.
#include <gtest/gtest.h>

#include <set>

#include "data/caption.h"

using namespace sinter::data;

TEST(Caption, UnchangedWithoutOptions) {
  CaptionSettings s;
  Rng rng(1);
  EXPECT_EQ(processCaption("a photo of sks dog\nsecond line", s, {}, rng), "a photo of sks dog");
  EXPECT_TRUE(captionIsFixed(s));
  s.captionPrefix = "masterpiece,";
  s.captionSuffix = ", best";
  EXPECT_EQ(processCaption("dog", s, {}, rng), "masterpiece, dog , best");
}

TEST(Caption, ShuffleKeepsFirstTokens) {
  CaptionSettings s;
  s.shuffleCaption = true;
  s.keepTokens = 2;
  EXPECT_FALSE(captionIsFixed(s));
  std::set<std::string> seen;
  Rng rng(42);
  for (int i = 0; i < 50; ++i) {
    const std::string c = processCaption("sks, dog,  red , grass, sky", s, {}, rng);
    EXPECT_EQ(c.rfind("sks, dog, ", 0), 0u) << c;
    EXPECT_EQ(c.size(), std::string("sks, dog, red, grass, sky").size());
    seen.insert(c);
  }
  EXPECT_EQ(seen.size(), 6u);  // all orders of the three free tags appear
  // The same seed gives the same order.
  Rng a(7), b(7);
  EXPECT_EQ(processCaption("a, b, c, d, e, f", s, {}, a), processCaption("a, b, c, d, e, f", s, {}, b));
}

TEST(Caption, KeepTokensSeparator) {
  CaptionSettings s;
  s.shuffleCaption = true;
  s.keepTokensSeparator = "|||";
  Rng rng(3);
  for (int i = 0; i < 20; ++i) {
    const std::string c = processCaption("sks girl, 1girl ||| a, b, c ||| by artist", s, {}, rng);
    EXPECT_EQ(c.rfind("sks girl, 1girl, ", 0), 0u) << c;
    EXPECT_EQ(c.substr(c.size() - 11), ", by artist") << c;
  }
}

TEST(Caption, WholeCaptionDropout) {
  CaptionSettings s;
  s.captionDropoutRate = 0.25;
  Rng rng(5);
  int empty = 0;
  for (int i = 0; i < 4000; ++i) empty += processCaption("dog", s, {}, rng).empty();
  EXPECT_NEAR(empty / 4000.0, 0.25, 0.03);
  CaptionSettings every;
  every.captionDropoutEveryNEpochs = 3;
  EXPECT_EQ(processCaption("dog", every, {2, 0, 0}, rng), "dog");
  EXPECT_EQ(processCaption("dog", every, {3, 0, 0}, rng), "");
}

TEST(Caption, TagDropoutSparesKeptTokens) {
  CaptionSettings s;
  s.captionTagDropoutRate = 0.5;
  s.keepTokens = 1;
  Rng rng(9);
  size_t tags = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string c = processCaption("sks, a, b, c, d", s, {}, rng);
    EXPECT_EQ(c.rfind("sks", 0), 0u);
    tags += std::count(c.begin(), c.end(), ',');
  }
  EXPECT_NEAR(tags / 1000.0, 2.0, 0.2);  // half of the 4 free tags survive on average
}

TEST(Caption, WildcardsAndSecondarySeparator) {
  CaptionSettings s;
  s.enableWildcard = true;
  s.secondarySeparator = ";;;";
  Rng rng(11);
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) seen.insert(processCaption("a {red|blue} {{x}} car;;;fast", s, {}, rng));
  EXPECT_EQ(seen, (std::set<std::string>{"a red {x} car,fast", "a blue {x} car,fast"}));
  std::set<std::string> lines;
  for (int i = 0; i < 100; ++i) lines.insert(processCaption("one\ntwo", s, {}, rng));
  EXPECT_EQ(lines.size(), 2u);
}

TEST(Caption, TokenWarmup) {
  CaptionSettings s;
  s.tokenWarmupStep = 10;
  s.tokenWarmupMin = 1;
  Rng rng(1);
  EXPECT_EQ(processCaption("a, b, c, d, e", s, {1, 0, 100}, rng), "a");
  EXPECT_EQ(processCaption("a, b, c, d, e", s, {1, 5, 100}, rng), "a, b, c");
  EXPECT_EQ(processCaption("a, b, c, d, e", s, {1, 10, 100}, rng), "a, b, c, d, e");
  s.tokenWarmupStep = 0.1;  // 10% of 100 steps
  EXPECT_EQ(processCaption("a, b, c, d, e", s, {1, 5, 100}, rng), "a, b, c");
}

// Bucket lists and choices against numbers computed with sd-scripts' own algorithm
// (model_util.make_bucket_resolutions, BucketManager.select_bucket, get_crop_ltrb).
#include <gtest/gtest.h>

#include <set>

#include "data/buckets.h"

using namespace sinter::data;

namespace {
std::string join(const std::vector<Resolution>& v) {
  std::string s;
  for (const auto& r : v) s += toString(r) + " ";
  return s;
}
}  // namespace

TEST(Buckets, SdxlListWithMax2048) {
  const auto r = makeBucketResolutions({1024, 1024}, 256, 2048, 64);
  ASSERT_EQ(r.size(), 41u);
  EXPECT_EQ(join(r),
            "256x2048 320x2048 384x2048 448x2048 512x1856 512x1920 512x1984 512x2048 576x1664 576x1728 576x1792 "
            "640x1536 640x1600 704x1408 704x1472 768x1280 768x1344 832x1216 896x1152 960x1088 1024x1024 1088x960 "
            "1152x896 1216x832 1280x768 1344x768 1408x704 1472x704 1536x640 1600x640 1664x576 1728x576 1792x576 "
            "1856x512 1920x512 1984x512 2048x256 2048x320 2048x384 2048x448 2048x512 ");
}

TEST(Buckets, ListWithMax1024AndOtherSteps) {
  EXPECT_EQ(makeBucketResolutions({1024, 1024}, 256, 1024, 64).size(), 25u);
  EXPECT_EQ(join(makeBucketResolutions({512, 512}, 256, 1024, 64)),
            "256x832 256x896 256x960 256x1024 320x704 320x768 384x640 448x576 512x512 576x448 640x384 704x320 "
            "768x320 832x256 896x256 960x256 1024x256 ");
  const auto r = makeBucketResolutions({512, 768}, 320, 960, 32);
  ASSERT_EQ(r.size(), 27u);
  EXPECT_EQ(toString(r.front()), "320x960");
  EXPECT_EQ(toString(r[12]), "608x608");
  EXPECT_EQ(toString(r.back()), "960x384");
}

TEST(Buckets, SelectionMatchesSdScripts) {
  BucketSettings s;
  s.resolution = {1024, 1024};
  s.enableBucket = true;
  s.minBucketReso = 256;
  s.maxBucketReso = 2048;
  BucketSettings noUp = s;
  noUp.bucketNoUpscale = true;
  const BucketSelector sel(s), selNoUp(noUp);
  struct Case { int w, h; const char *bucket, *resized, *bucketNoUp, *resizedNoUp; double cropL, cropT; };
  for (const Case c : {Case{1920, 1080, "1344x768", "1365x768", "1344x768", "1365x768", 0, 6},
                       Case{1080, 1920, "768x1344", "768x1365", "768x1344", "768x1365", 6, 0},
                       Case{1000, 1000, "1024x1024", "1024x1024", "960x960", "1000x1000", 0, 0},
                       Case{300, 200, "1216x832", "1248x832", "256x192", "300x200", 0, 10},
                       Case{4000, 3000, "1152x896", "1195x896", "1088x832", "1109x832", 0, 16},
                       Case{800, 1200, "832x1216", "832x1248", "768x1152", "800x1200", 10, 0},
                       Case{512, 2048, "512x2048", "512x2048", "512x2048", "512x2048", 0, 0},
                       Case{333, 777, "640x1536", "658x1536", "320x768", "333x777", 0, 21}}) {
    const auto a = sel.select(c.w, c.h);
    EXPECT_EQ(toString(a.bucket), c.bucket) << c.w << "x" << c.h;
    EXPECT_EQ(toString(a.resized), c.resized) << c.w << "x" << c.h;
    const auto b = selNoUp.select(c.w, c.h);
    EXPECT_EQ(toString(b.bucket), c.bucketNoUp) << c.w << "x" << c.h;
    EXPECT_EQ(toString(b.resized), c.resizedNoUp) << c.w << "x" << c.h;
    const auto crop = cropLtrb(a.bucket, {c.w, c.h});
    EXPECT_DOUBLE_EQ(crop.left, c.cropL) << c.w << "x" << c.h;
    EXPECT_DOUBLE_EQ(crop.top, c.cropT) << c.w << "x" << c.h;
  }
  EXPECT_NEAR(cropLtrb({1216, 832}, {300, 200}).bottom, 820.6666666666666, 1e-9);
}

TEST(Buckets, TinySizesAndCrop) {
  BucketSettings s;
  s.resolution = {64, 64};
  s.enableBucket = true;
  s.minBucketReso = 32;
  s.maxBucketReso = 128;
  s.bucketResoSteps = 16;
  const BucketSelector sel(s);
  EXPECT_EQ(join(sel.predefined()), "32x96 32x112 32x128 48x80 64x64 80x48 96x32 112x32 128x32 ");
  const auto c = sel.select(96, 64);
  EXPECT_EQ(toString(c.bucket), "80x48");
  EXPECT_EQ(toString(c.resized), "80x53");
  RgbImage img(96, 64);
  for (int y = 0; y < 64; ++y) img.pixel(0, y)[0] = std::uint8_t(y * 4);
  Rng rng(1);
  const RgbImage out = resizeAndCrop(img, c, false, rng);
  EXPECT_EQ(out.width, 80);
  EXPECT_EQ(out.height, 48);
  // Random crops stay inside and vary with the generator.
  std::set<int> firstRows;
  for (int i = 0; i < 20; ++i) {
    const RgbImage r = resizeAndCrop(img, c, true, rng);
    ASSERT_EQ(r.height, 48);
    firstRows.insert(r.pixel(0, 0)[0]);
  }
  EXPECT_GT(firstRows.size(), 1u);
}

TEST(Buckets, DisabledBucketingUsesResolution) {
  BucketSettings s;
  s.resolution = {64, 48};
  const BucketSelector sel(s);
  const auto c = sel.select(200, 100);
  EXPECT_EQ(toString(c.bucket), "64x48");
  EXPECT_EQ(toString(c.resized), "96x48");
  const auto d = sel.select(30, 60);
  EXPECT_EQ(toString(d.bucket), "64x48");
  EXPECT_EQ(toString(d.resized), "64x128");
}

TEST(Buckets, SettingsAreCheckedAndAdjusted) {
  BucketSettings s;
  s.resolution = {1024, 1024};
  s.enableBucket = true;
  s.minBucketReso = 300;
  s.maxBucketReso = 2000;
  const BucketSelector sel(s);
  EXPECT_EQ(sel.settings().minBucketReso, 256);
  EXPECT_EQ(sel.settings().maxBucketReso, 2048);
  EXPECT_EQ(sel.warnings().size(), 2u);
  s.minBucketReso = 1088;
  s.maxBucketReso = 2048;
  EXPECT_THROW(BucketSelector{s}, std::invalid_argument);
  s.minBucketReso = 256;
  s.maxBucketReso = 512;
  EXPECT_THROW(BucketSelector{s}, std::invalid_argument);
}

TEST(Buckets, ParseResolution) {
  EXPECT_EQ(toString(parseResolution("1024")), "1024x1024");
  EXPECT_EQ(toString(parseResolution("768,1024")), "768x1024");
  EXPECT_EQ(toString(parseResolution("768, 1024")), "768x1024");
  EXPECT_THROW(parseResolution("big"), std::invalid_argument);
  EXPECT_THROW(parseResolution("1,2,3"), std::invalid_argument);
  EXPECT_THROW(parseResolution("0"), std::invalid_argument);
}

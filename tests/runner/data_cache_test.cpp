// Latent and text-encoder caches: what is cached, disk reuse, and invalidation when the image,
// the caption, the settings or the encoder change. The "VAE" is 8x8 average pooling and the
// "text encoder" sums character codes: simple real functions of their inputs.
#include <gtest/gtest.h>

#include <thread>

#include "data/dataset.h"
#include "data/image_tensor.h"
#include "data/latent_cache.h"
#include "data/text_cache.h"
#include "data_test_images.h"

using namespace sinter;
using namespace sinter::data;
using namespace sinter::data::testing;

namespace {

int encoderCalls = 0;
torch::Tensor poolEncoder(const torch::Tensor& images) {
  ++encoderCalls;
  return torch::avg_pool2d(images, 8);
}

TextOutputs charSumEncoder(const std::vector<std::string>& captions) {
  std::vector<torch::Tensor> rows;
  for (const auto& c : captions) {
    double sum = 0;
    for (unsigned char ch : c) sum += ch;
    rows.push_back(torch::tensor({sum, static_cast<double>(c.size())}, torch::kFloat32));
  }
  return {{"pooled", torch::stack(rows)}};
}

Dataset makeDataset(const TempDir& dir, bool flip, bool randomCrop = false) {
  DatasetSettings d;
  d.buckets.resolution = {32, 32};
  d.buckets.enableBucket = true;
  d.buckets.minBucketReso = 16;
  d.buckets.maxBucketReso = 64;
  d.buckets.bucketResoSteps = 16;
  SubsetSettings s;
  s.imageDir = dir / "imgs";
  s.classTokens = "sks";
  s.captionExtension = ".txt";
  s.flipAug = flip;
  s.randomCrop = randomCrop;
  d.subsets.push_back(s);
  return buildDataset({d});
}

}  // namespace

TEST(LatentCache, MemoryCacheHoldsEncodedPreprocessedImages) {
  TempDir dir;
  fs::create_directories(dir.path / "imgs");
  writeImage(dir / "imgs/a.png", 48, 32);
  writeImage(dir / "imgs/b.png", 32, 32);
  writeImage(dir / "imgs/c.png", 32, 32);
  const Dataset d = makeDataset(dir, true);
  LatentCacheStats stats;
  LatentCacheOptions opts;
  opts.batchSize = 2;
  opts.workers = 2;
  const LatentCache cache = LatentCache::build(d, poolEncoder, opts, &stats);
  EXPECT_EQ(stats.encoded, 3u);
  for (size_t i = 0; i < 3; ++i) {
    const auto& e = d.images[i];
    const auto& c = cache.get(i);
    Rng unused(0);
    const RgbImage img = resizeAndCrop(loadImageFile(e.path), e.choice, false, unused);
    EXPECT_TRUE(torch::allclose(c.latents, torch::avg_pool2d(imageToTensor(img).unsqueeze(0), 8)[0], 1e-5, 1e-6));
    EXPECT_TRUE(torch::allclose(c.flippedLatents,
                                torch::avg_pool2d(imageToTensor(flipHorizontal(img)).unsqueeze(0), 8)[0], 1e-5, 1e-6));
    EXPECT_EQ(c.latents.size(1) * 8, e.choice.bucket.height);
  }
  EXPECT_EQ(cache.get(0).originalSize.width, 48);
}

TEST(LatentCache, DiskCacheIsReusedAndInvalidated) {
  TempDir dir;
  fs::create_directories(dir.path / "imgs");
  writeImage(dir / "imgs/a.png", 32, 32);
  writeImage(dir / "imgs/b.png", 48, 32);
  LatentCacheOptions opts;
  opts.toDisk = true;
  opts.encoderIdentity = "pool8";
  LatentCacheStats stats;
  Dataset d = makeDataset(dir, false);
  const LatentCache first = LatentCache::build(d, poolEncoder, opts, &stats);
  EXPECT_EQ(stats.encoded, 2u);
  const std::string cacheFile = latentCachePath(d.images[0].path, d.images[0].choice.bucket);
  EXPECT_TRUE(fs::exists(cacheFile)) << cacheFile;
  EXPECT_NE(cacheFile.find("a_32x32_sinter_sdxl.safetensors"), std::string::npos);

  const int callsBefore = encoderCalls;
  const LatentCache second = LatentCache::build(d, poolEncoder, opts, &stats);
  EXPECT_EQ(stats.loadedFromDisk, 2u);
  EXPECT_EQ(stats.encoded, 0u);
  EXPECT_EQ(encoderCalls, callsBefore);
  EXPECT_TRUE(torch::equal(first.get(1).latents, second.get(1).latents));

  // The image changes (new content and size on disk): only it is encoded again.
  writeImage(dir / "imgs/a.png", 32, 32, 4);
  d = makeDataset(dir, false);
  LatentCache::build(d, poolEncoder, opts, &stats);
  EXPECT_EQ(stats.encoded, 1u);
  EXPECT_EQ(stats.loadedFromDisk, 1u);

  // A different encoder, or flip_aug turned on: everything again.
  opts.encoderIdentity = "other-vae";
  LatentCache::build(d, poolEncoder, opts, &stats);
  EXPECT_EQ(stats.encoded, 2u);
  d = makeDataset(dir, true);
  LatentCache::build(d, poolEncoder, opts, &stats);
  EXPECT_EQ(stats.encoded, 2u);
  const LatentCache flipped = LatentCache::build(d, poolEncoder, opts, &stats);
  EXPECT_EQ(stats.loadedFromDisk, 2u);
  EXPECT_TRUE(flipped.get(0).flippedLatents.defined());

  // A damaged cache file is replaced, never trusted.
  writeText(cacheFile, "broken");
  LatentCache::build(d, poolEncoder, opts, &stats);
  EXPECT_EQ(stats.encoded, 1u);
}

// An encoder of another factor than 8 (the tiny test models' VAE) has its disk cache read back, not
// encoded again at every start; latents of the wrong size for that factor are encoded again.
TEST(LatentCache, DiskCacheKeepsTheEncodersOwnFactor) {
  TempDir dir;
  fs::create_directories(dir.path / "imgs");
  writeImage(dir / "imgs/a.png", 32, 32);
  writeImage(dir / "imgs/b.png", 48, 32);
  auto pool4 = [](const torch::Tensor& images) { return torch::avg_pool2d(images, 4); };
  LatentCacheOptions opts;
  opts.toDisk = true;
  opts.encoderIdentity = "pool4";
  opts.downscale = 4;
  LatentCacheStats stats;
  const Dataset d = makeDataset(dir, false);
  const LatentCache first = LatentCache::build(d, pool4, opts, &stats);
  EXPECT_EQ(stats.encoded, 2u);
  EXPECT_EQ(first.get(0).latents.size(1), 8);  // 32 px / 4
  const LatentCache second = LatentCache::build(d, pool4, opts, &stats);
  EXPECT_EQ(stats.loadedFromDisk, 2u);
  EXPECT_EQ(stats.encoded, 0u);
  EXPECT_TRUE(torch::equal(first.get(1).latents, second.get(1).latents));
  // The same files read as a factor-8 encoder's: the wrong size, so encoded again.
  opts.downscale = 8;
  LatentCache::build(d, poolEncoder, opts, &stats);
  EXPECT_EQ(stats.loadedFromDisk, 0u);
  EXPECT_EQ(stats.encoded, 2u);
}

TEST(LatentCache, RandomCropCannotBeCached) {
  TempDir dir;
  fs::create_directories(dir.path / "imgs");
  writeImage(dir / "imgs/a.png", 32, 32);
  EXPECT_THROW(LatentCache::build(makeDataset(dir, false, true), poolEncoder, {}), DatasetError);
}

TEST(TextCache, CachesProcessedCaptionsAndNoticesChanges) {
  TempDir dir;
  fs::create_directories(dir.path / "imgs");
  writeImage(dir / "imgs/a.png", 32, 32);
  writeImage(dir / "imgs/b.png", 32, 32);
  writeText(dir / "imgs/a.txt", "a cat");
  TextCacheOptions opts;
  opts.toDisk = true;
  opts.encoderIdentity = "charsum";
  opts.batchSize = 2;
  TextCacheStats stats;
  Dataset d = makeDataset(dir, false);
  const TextCache cache = TextCache::build(d, charSumEncoder, opts, &stats);
  EXPECT_EQ(stats.encoded, 2u);
  EXPECT_EQ(cache.caption(0), "a cat");
  EXPECT_EQ(cache.caption(1), "sks");
  EXPECT_FLOAT_EQ(cache.get(1).at("pooled")[0].item<float>(), 's' + 'k' + 's');
  TextCache::build(d, charSumEncoder, opts, &stats);
  EXPECT_EQ(stats.loadedFromDisk, 2u);
  writeText(dir / "imgs/a.txt", "a dog");
  d = makeDataset(dir, false);
  const TextCache changed = TextCache::build(d, charSumEncoder, opts, &stats);
  EXPECT_EQ(stats.encoded, 1u);
  EXPECT_EQ(changed.caption(0), "a dog");

  d.datasets[0].subsets[0].caption.shuffleCaption = true;
  EXPECT_THROW(TextCache::build(d, charSumEncoder, opts), DatasetError);
}

// The loader: batch contents and conditioning, loss weights, determinism across thread counts,
// exact continuation after a resume, cached latents/text outputs in batches, and batches of one
// shape joined (batched gradient accumulation).
#include <gtest/gtest.h>

#include "data/batch_loader.h"
#include "data/image_tensor.h"
#include "data/joined_batch.h"
#include "data_test_images.h"

using namespace sinter;
using namespace sinter::data;
using namespace sinter::data::testing;

namespace {

struct Fixture {
  TempDir dir;
  Dataset dataset;
  Fixture(bool flip = true, bool shuffle = true, bool colorAug = false) {
    fs::create_directories(dir.path / "train");
    fs::create_directories(dir.path / "reg");
    const int sizes[][2] = {{48, 32}, {32, 48}, {32, 32}, {40, 40}, {64, 32}, {30, 30}};
    for (int i = 0; i < 6; ++i)
      writeImage(dir / ("train/" + std::to_string(i) + ".png"), sizes[i][0], sizes[i][1]);
    writeText(dir / "train/0.txt", "sks, red, blue, green");
    writeImage(dir / "reg/r.png", 32, 32);
    DatasetSettings d;
    d.buckets.resolution = {32, 32};
    d.buckets.enableBucket = true;
    d.buckets.minBucketReso = 16;
    d.buckets.maxBucketReso = 64;
    d.buckets.bucketResoSteps = 16;
    d.batchSize = 2;
    d.priorLossWeight = 0.25;
    SubsetSettings train;
    train.imageDir = dir / "train";
    train.numRepeats = 2;
    train.classTokens = "sks";
    train.captionExtension = ".txt";
    train.flipAug = flip;
    train.colorAug = colorAug;
    train.randomCrop = false;
    train.caption.shuffleCaption = shuffle;
    train.caption.keepTokens = 1;
    SubsetSettings reg;
    reg.imageDir = dir / "reg";
    reg.isReg = true;
    reg.classTokens = "dog";
    d.subsets = {train, reg};
    dataset = buildDataset({d});
  }
};

bool sameBatch(const Batch& a, const Batch& b) {
  return a.imageIndices == b.imageIndices && a.captions == b.captions && a.flipped == b.flipped &&
         torch::equal(a.images, b.images) && torch::equal(a.cropTopLefts, b.cropTopLefts);
}

torch::Tensor pool(const torch::Tensor& x) { return torch::avg_pool2d(x, 8); }

// A text cache holding one value a caption (1), enough to follow captions through batches.
TextCache oneValueTextCache(const Fixture& f) {
  return TextCache::build(
      f.dataset,
      [](const std::vector<std::string>& captions) {
        return TextOutputs{{"len", torch::tensor(std::vector<float>(captions.size(), 1.0f)).unsqueeze(1)}};
      },
      {});
}

}  // namespace

TEST(BatchLoader, BatchesCarryImagesConditioningAndWeights) {
  Fixture f;
  const BatchPlan plan(f.dataset, 5);
  BatchLoader loader(f.dataset, plan, {});
  int regSamples = 0;
  for (long long i = 0; i < plan.batchesPerEpoch(); ++i) {
    const Batch b = loader.next();
    const long long n = static_cast<long long>(b.imageIndices.size());
    ASSERT_EQ(b.images.sizes(), (std::vector<int64_t>{n, 3, b.bucket.height, b.bucket.width}));
    EXPECT_LE(b.images.max().item<float>(), 1.0f);
    EXPECT_GE(b.images.min().item<float>(), -1.0f);
    ASSERT_EQ(static_cast<long long>(b.captions.size()), n);
    for (long long k = 0; k < n; ++k) {
      const ImageEntry& e = f.dataset.images[b.imageIndices[static_cast<size_t>(k)]];
      EXPECT_EQ(b.originalSizesHW[k][0].item<int64_t>(), e.size.height);
      EXPECT_EQ(b.originalSizesHW[k][1].item<int64_t>(), e.size.width);
      EXPECT_EQ(b.targetSizesHW[k][0].item<int64_t>(), b.bucket.height);
      EXPECT_FLOAT_EQ(b.lossWeights[k].item<float>(), e.isReg ? 0.25f : 1.0f);
      regSamples += e.isReg;
      if (e.path.find("0.png") != std::string::npos)
        EXPECT_EQ(b.captions[static_cast<size_t>(k)].rfind("sks, ", 0), 0u);  // keep_tokens = 1
    }
  }
  EXPECT_EQ(regSamples, 12);  // balanced to the 12 train samples
  EXPECT_EQ(loader.state().epoch, 1);
  EXPECT_EQ(loader.state().indexInEpoch, 0);
}

TEST(BatchLoader, SameBatchesWhateverTheThreadCount) {
  Fixture f;
  const BatchPlan plan(f.dataset, 11);
  BatchLoader serial(f.dataset, plan, {0});
  BatchLoader threaded(f.dataset, plan, {3});
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(sameBatch(serial.next(), threaded.next())) << i;
}

TEST(BatchLoader, ResumeContinuesExactly) {
  Fixture f;
  const BatchPlan plan(f.dataset, 3);
  BatchLoader full(f.dataset, plan, {2});
  std::vector<Batch> reference;
  for (int i = 0; i < 30; ++i) reference.push_back(full.next());
  // Stop after 17 batches, save three integers, start a new loader from them.
  BatchLoader first(f.dataset, plan, {2});
  for (int i = 0; i < 17; ++i) first.next();
  const DataOrderState saved = first.state();
  const BatchPlan plan2(f.dataset, saved.seed);
  BatchLoader resumed2(f.dataset, plan2, {0});
  resumed2.seek(saved);
  for (int i = 17; i < 30; ++i) ASSERT_TRUE(sameBatch(reference[static_cast<size_t>(i)], resumed2.next())) << i;
}

TEST(BatchLoader, FlipMirrorsPixelsAndCropConditioning) {
  Fixture f(true, false);
  const BatchPlan plan(f.dataset, 1);
  BatchLoader loader(f.dataset, plan, {});
  int flips = 0, plain = 0;
  for (int i = 0; i < 40; ++i) {
    const Batch b = loader.next();
    for (size_t k = 0; k < b.imageIndices.size(); ++k) {
      const ImageEntry& e = f.dataset.images[b.imageIndices[k]];
      Rng unused(0);
      const auto ref = imageToTensor(resizeAndCrop(loadImageFile(e.path), e.choice, false, unused));
      const auto got = b.images[static_cast<long>(k)];
      if (b.flipped[k]) {
        ++flips;
        EXPECT_TRUE(torch::equal(got, ref.flip({2})));
        const CropLtrb c = cropLtrb(e.choice.bucket, {e.size.width, e.size.height});
        EXPECT_EQ(b.cropTopLefts[static_cast<long>(k)][1].item<int64_t>(),
                  static_cast<long long>(e.choice.bucket.width - c.right));
      } else {
        ++plain;
        EXPECT_TRUE(torch::equal(got, ref));
      }
    }
  }
  EXPECT_GT(flips, 10);
  EXPECT_GT(plain, 10);
}

// color_aug (data/color_augment.h) changes about a third of its subset's pictures, the same ones
// whatever the thread count; the subset without it keeps its pixels.
TEST(BatchLoader, ColorAugChangesAThirdOfItsSubsetsPictures) {
  Fixture f(false, false, true);
  const BatchPlan plan(f.dataset, 5);
  BatchLoader loader(f.dataset, plan, {});
  BatchLoader threaded(f.dataset, plan, {3});
  int changed = 0, kept = 0;
  for (int i = 0; i < 60; ++i) {
    const Batch b = loader.next();
    ASSERT_TRUE(sameBatch(b, threaded.next())) << i;
    for (size_t k = 0; k < b.imageIndices.size(); ++k) {
      const ImageEntry& e = f.dataset.images[b.imageIndices[k]];
      Rng unused(0);
      const bool same = torch::equal(b.images[static_cast<long>(k)], imageToTensor(resizeAndCrop(loadImageFile(e.path), e.choice, false, unused)));
      if (e.isReg) {
        EXPECT_TRUE(same);
      } else {
        (same ? kept : changed)++;
      }
    }
  }
  const double share = changed / static_cast<double>(changed + kept);
  EXPECT_GT(share, 0.15) << changed << " of " << changed + kept;
  EXPECT_LT(share, 0.5) << changed << " of " << changed + kept;
}

TEST(BatchLoader, CachedLatentsAndTextOutputs) {
  Fixture f(true, false);
  const LatentCache latents = LatentCache::build(f.dataset, pool, {});
  const TextCache texts = oneValueTextCache(f);
  const BatchPlan plan(f.dataset, 2);
  BatchLoader loader(f.dataset, plan, {2}, &latents, &texts);
  for (int i = 0; i < 10; ++i) {
    const Batch b = loader.next();
    EXPECT_FALSE(b.images.defined());
    ASSERT_TRUE(b.latents.defined());
    const long long n = static_cast<long long>(b.imageIndices.size());
    EXPECT_EQ(b.latents.sizes(), (std::vector<int64_t>{n, 3, b.bucket.height / 8, b.bucket.width / 8}));
    EXPECT_EQ(b.textOutputs.at("len").size(0), n);
    for (long long k = 0; k < n; ++k) {
      const auto& c = latents.get(b.imageIndices[static_cast<size_t>(k)]);
      EXPECT_TRUE(torch::equal(b.latents[k], b.flipped[static_cast<size_t>(k)] ? c.flippedLatents : c.latents));
    }
  }
}

// Batches of one bucket and size join sample after sample, in order, every tensor and list with
// them; batches of different shapes are refused, naming the shapes.
TEST(BatchLoader, BatchesOfOneShapeJoinInOrder) {
  Fixture f(true, false);
  const LatentCache latents = LatentCache::build(f.dataset, pool, {});
  const TextCache texts = oneValueTextCache(f);
  const BatchPlan plan(f.dataset, 2);
  BatchLoader loader(f.dataset, plan, {}, &latents, &texts);
  std::vector<Batch> all;
  for (long long i = 0; i < plan.batchesPerEpoch(); ++i) all.push_back(loader.next());
  // Two batches of one shape, and one of another.
  const Batch* other = nullptr;
  std::vector<Batch> same;
  for (const Batch& b : all) {
    if (same.empty() || (b.bucket == same.front().bucket && b.imageIndices.size() == same.front().imageIndices.size())) {
      if (same.size() < 2) same.push_back(b);
    } else if (!other) {
      other = &b;
    }
  }
  ASSERT_EQ(same.size(), 2u);
  ASSERT_NE(other, nullptr);
  std::string why;
  const std::optional<Batch> joined = joinBatches(same, &why);
  ASSERT_TRUE(joined) << why;
  const int64_t n = static_cast<int64_t>(same[0].imageIndices.size());
  EXPECT_EQ(joined->microBatches, 2);
  EXPECT_EQ(joined->bucket, same[0].bucket);
  EXPECT_EQ(joined->indexInEpoch, same[1].indexInEpoch);
  EXPECT_EQ(joined->latents.size(0), 2 * n);
  EXPECT_TRUE(torch::equal(joined->latents.narrow(0, 0, n), same[0].latents));
  EXPECT_TRUE(torch::equal(joined->latents.narrow(0, n, n), same[1].latents));
  EXPECT_TRUE(torch::equal(joined->lossWeights, torch::cat({same[0].lossWeights, same[1].lossWeights})));
  EXPECT_TRUE(torch::equal(joined->cropTopLefts, torch::cat({same[0].cropTopLefts, same[1].cropTopLefts})));
  EXPECT_TRUE(torch::equal(joined->textOutputs.at("len"), torch::cat({same[0].textOutputs.at("len"), same[1].textOutputs.at("len")})));
  std::vector<size_t> indices = same[0].imageIndices;
  indices.insert(indices.end(), same[1].imageIndices.begin(), same[1].imageIndices.end());
  EXPECT_EQ(joined->imageIndices, indices);
  ASSERT_EQ(joined->captions.size(), static_cast<size_t>(2 * n));
  EXPECT_EQ(joined->captions.back(), same[1].captions.back());

  EXPECT_FALSE(joinBatches({same[0], *other}, &why));
  EXPECT_NE(why.find("micro-batches of different shapes"), std::string::npos) << why;
  EXPECT_FALSE(joinBatches({same[0]}, &why));
}

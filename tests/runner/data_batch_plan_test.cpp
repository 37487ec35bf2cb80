// Step counting as sd-scripts does it, deterministic per-epoch order, resume positions, shape
// signatures.
#include <gtest/gtest.h>

#include <set>

#include "data/batch_plan.h"

using namespace sinter::data;

namespace {

// A dataset of `counts[i]` images in bucket `buckets[i]`, each with `repeats`.
Dataset synthetic(const std::vector<std::pair<Resolution, int>>& buckets, int repeats, int batchSize) {
  Dataset d;
  DatasetSettings s;
  s.batchSize = batchSize;
  s.subsets.push_back({});
  d.datasets.push_back(s);
  for (const auto& [res, count] : buckets)
    for (int i = 0; i < count; ++i) {
      ImageEntry e;
      e.path = "img" + std::to_string(d.images.size());
      e.repeats = repeats;
      e.choice.bucket = res;
      d.images.push_back(e);
    }
  return d;
}

}  // namespace

TEST(BatchPlan, CountsLikeSdScripts) {
  // 5 images in 64x64 and 3 in 80x48, 2 repeats, batch 4: buckets of 10 and 6 -> 3 + 2 batches.
  const Dataset d = synthetic({{{64, 64}, 5}, {{80, 48}, 3}}, 2, 4);
  const BatchPlan plan(d, 42);
  EXPECT_EQ(plan.batchesPerEpoch(), 5);
  // max_train_epochs overrides max_train_steps: 10 epochs x ceil(5 / 2) = 30 steps.
  const auto a = computeTrainingLength(plan.batchesPerEpoch(), 10, 1600, 2);
  EXPECT_EQ(a.stepsPerEpoch, 3);
  EXPECT_EQ(a.maxTrainSteps, 30);
  EXPECT_EQ(a.numEpochs, 10);
  const auto b = computeTrainingLength(plan.batchesPerEpoch(), std::nullopt, 1600, 1);
  EXPECT_EQ(b.maxTrainSteps, 1600);
  EXPECT_EQ(b.numEpochs, 320);
  const auto c = computeTrainingLength(7, std::nullopt, 10, 1);
  EXPECT_EQ(c.numEpochs, 2);  // the last epoch is cut short
  EXPECT_THROW(computeTrainingLength(0, std::nullopt, 10, 1), std::invalid_argument);
}

TEST(BatchPlan, EveryEpochUsesEachSampleOnceInOneBucketShape) {
  const Dataset d = synthetic({{{64, 64}, 5}, {{80, 48}, 3}}, 2, 4);
  const BatchPlan plan(d, 7);
  for (long long epoch = 0; epoch < 3; ++epoch) {
    const auto batches = plan.epochBatches(epoch);
    ASSERT_EQ(batches.size(), 5u);
    std::multiset<size_t> seen;
    for (const auto& b : batches) {
      for (size_t i : b.imageIndices) {
        EXPECT_EQ(d.images[i].choice.bucket, b.bucket);
        seen.insert(i);
      }
      EXPECT_LE(b.imageIndices.size(), 4u);
    }
    for (size_t i = 0; i < d.images.size(); ++i) EXPECT_EQ(seen.count(i), 2u);
  }
}

TEST(BatchPlan, OrderIsDeterministicPerSeedAndEpoch) {
  const Dataset d = synthetic({{{64, 64}, 20}, {{80, 48}, 12}, {{48, 80}, 9}}, 1, 2);
  const BatchPlan plan(d, 1234), same(d, 1234), other(d, 99);
  auto flat = [](const std::vector<PlannedBatch>& bs) {
    std::vector<size_t> v;
    for (const auto& b : bs) v.insert(v.end(), b.imageIndices.begin(), b.imageIndices.end());
    return v;
  };
  EXPECT_EQ(flat(plan.epochBatches(3)), flat(same.epochBatches(3)));
  EXPECT_NE(flat(plan.epochBatches(3)), flat(plan.epochBatches(4)));  // reshuffled every epoch
  EXPECT_NE(flat(plan.epochBatches(3)), flat(other.epochBatches(3)));
}

TEST(BatchPlan, ResumePositions) {
  // 5 batches per epoch, accumulation 2: steps per epoch 3 (micro-batches 0-1, 2-3, 4).
  EXPECT_EQ(positionForStep(1, 0, 5, 2), (DataOrderState{1, 0, 0}));
  EXPECT_EQ(positionForStep(1, 2, 5, 2), (DataOrderState{1, 0, 4}));
  EXPECT_EQ(positionForStep(1, 3, 5, 2), (DataOrderState{1, 1, 0}));
  EXPECT_EQ(positionForStep(1, 7, 5, 2), (DataOrderState{1, 2, 2}));
}

TEST(BatchPlan, ShapeSignaturesMostFrequentFirst) {
  // 64x64: 10 images, batch 4 -> 2 full + 1 of 2; 80x48: 3 -> 1 of 3; 48x80: 12 -> 3 full.
  const Dataset d = synthetic({{{64, 64}, 10}, {{80, 48}, 3}, {{48, 80}, 12}}, 1, 4);
  const auto sigs = BatchPlan(d, 0).shapeSignatures();
  ASSERT_EQ(sigs.size(), 4u);
  EXPECT_EQ(sigs[0].width, 48);
  EXPECT_EQ(sigs[0].countPerEpoch, 3);
  EXPECT_EQ(sigs[1].width, 64);
  EXPECT_EQ(sigs[1].batchSize, 4);
  EXPECT_EQ(sigs[1].countPerEpoch, 2);
  EXPECT_EQ(sigs[2].batchSize * sigs[2].height, 3 * 48);  // 80x48 x3 (larger area of the two singles)
  EXPECT_EQ(sigs[3].batchSize, 2);
}

TEST(BatchPlan, RanksShareEachEpochAsAccelerateShardsIt) {
  // 5 batches per epoch on 2 ranks: rank 0 takes batches 0, 2, 4 of the one-process order and
  // rank 1 takes 1, 3 and, to even the ranks out, the epoch's first batch again.
  const Dataset d = synthetic({{{64, 64}, 5}, {{80, 48}, 3}}, 2, 4);
  const BatchPlan whole(d, 42);
  const BatchPlan rank0(d, 42, BatchShard{0, 2}), rank1(d, 42, BatchShard{1, 2});
  EXPECT_EQ(rank0.allBatchesPerEpoch(), 5);
  EXPECT_EQ(rank0.batchesPerEpoch(), 3);
  EXPECT_EQ(rank1.batchesPerEpoch(), 3);
  for (long long epoch : {0LL, 1LL}) {
    const auto all = whole.epochBatches(epoch), a = rank0.epochBatches(epoch), b = rank1.epochBatches(epoch);
    ASSERT_EQ(a.size(), 3u);
    ASSERT_EQ(b.size(), 3u);
    const std::vector<size_t> fromAll0{0, 2, 4}, fromAll1{1, 3, 0};
    for (size_t j = 0; j < 3; ++j) {
      EXPECT_EQ(a[j].imageIndices, all[fromAll0[j]].imageIndices) << "epoch " << epoch << " rank 0 batch " << j;
      EXPECT_EQ(b[j].imageIndices, all[fromAll1[j]].imageIndices) << "epoch " << epoch << " rank 1 batch " << j;
    }
  }
  // Steps as sd-scripts counts them under accelerate: max_train_epochs 4 x ceil(5 / 2 / 1) = 12.
  EXPECT_EQ(computeTrainingLength(rank0.batchesPerEpoch(), 4, 1600, 1).maxTrainSteps, 12);
  // The shape plan is the whole epoch's on every rank (they capture the same signatures).
  EXPECT_EQ(rank1.shapeSignatures().size(), whole.shapeSignatures().size());
  EXPECT_THROW(BatchPlan(d, 42, BatchShard{2, 2}), std::invalid_argument);
}

#include "data/batch_plan.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace sinter::data {

namespace {
long long ceilDiv(long long a, long long b) { return (a + b - 1) / b; }
constexpr std::uint64_t kOrderStream = 0xFFFFFFFFULL;  // distinct from bucket indices
}  // namespace

TrainingLength computeTrainingLength(long long batchesPerEpoch, std::optional<long long> maxTrainEpochs,
                                     long long maxTrainSteps, int gradientAccumulationSteps) {
  if (batchesPerEpoch <= 0) throw std::invalid_argument("the dataset has no batches");
  if (gradientAccumulationSteps < 1) throw std::invalid_argument("gradient_accumulation_steps must be at least 1");
  TrainingLength t;
  t.batchesPerEpoch = batchesPerEpoch;
  t.stepsPerEpoch = ceilDiv(batchesPerEpoch, gradientAccumulationSteps);
  t.maxTrainSteps = maxTrainEpochs ? *maxTrainEpochs * t.stepsPerEpoch : maxTrainSteps;
  if (t.maxTrainSteps <= 0) throw std::invalid_argument("the run has no steps (max_train_steps/max_train_epochs)");
  t.numEpochs = ceilDiv(t.maxTrainSteps, t.stepsPerEpoch);
  return t;
}

DataOrderState positionForStep(std::uint64_t seed, long long globalStep, long long batchesPerEpoch,
                               int gradientAccumulationSteps) {
  const long long stepsPerEpoch = ceilDiv(batchesPerEpoch, gradientAccumulationSteps);
  DataOrderState s;
  s.seed = seed;
  s.epoch = globalStep / stepsPerEpoch;
  s.indexInEpoch = std::min(batchesPerEpoch, (globalStep % stepsPerEpoch) * gradientAccumulationSteps);
  return s;
}

BatchPlan::BatchPlan(const Dataset& dataset, std::uint64_t seed, BatchShard shard, PlanImages images)
    : seed_(seed), shard_(shard), shuffled_(images == PlanImages::Training) {
  if (shard.worldSize < 1 || shard.rank < 0 || shard.rank >= shard.worldSize)
    throw std::invalid_argument("rank " + std::to_string(shard.rank) + " of " + std::to_string(shard.worldSize) + " processes");
  // Buckets per dataset in resolution order (sd-scripts sorts them); images in dataset order.
  std::map<std::tuple<int, Resolution>, size_t> index;
  for (size_t i = 0; i < dataset.images.size(); ++i) {
    const ImageEntry& e = dataset.images[i];
    if (e.repeats <= 0 || e.validation != (images == PlanImages::Validation)) continue;
    const auto key = std::make_tuple(e.datasetIndex, e.choice.bucket);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, buckets_.size()).first;
      buckets_.push_back({e.datasetIndex, dataset.datasets[e.datasetIndex].batchSize, e.choice.bucket, {}});
    }
    for (int r = 0; r < e.repeats; ++r) buckets_[it->second].items.push_back(i);
  }
  std::stable_sort(buckets_.begin(), buckets_.end(), [](const Bucket& a, const Bucket& b) {
    return std::tie(a.datasetIndex, a.resolution) < std::tie(b.datasetIndex, b.resolution);
  });
  for (const auto& b : buckets_) allBatchesPerEpoch_ += ceilDiv(static_cast<long long>(b.items.size()), b.batchSize);
}

std::vector<PlannedBatch> BatchPlan::epochBatches(long long epoch) const {
  std::vector<PlannedBatch> batches;
  batches.reserve(static_cast<size_t>(allBatchesPerEpoch_));
  for (size_t bi = 0; bi < buckets_.size(); ++bi) {
    const Bucket& b = buckets_[bi];
    std::vector<size_t> items = b.items;
    if (shuffled_) {
      Rng rng(deriveSeed(seed_, static_cast<std::uint64_t>(epoch), bi));
      rng.shuffle(items);
    }
    for (size_t start = 0; start < items.size(); start += static_cast<size_t>(b.batchSize)) {
      const size_t end = std::min(items.size(), start + static_cast<size_t>(b.batchSize));
      batches.push_back({b.datasetIndex, b.resolution, {items.begin() + static_cast<long>(start), items.begin() + static_cast<long>(end)}});
    }
  }
  if (shuffled_) {
    Rng order(deriveSeed(seed_, static_cast<std::uint64_t>(epoch), kOrderStream));
    order.shuffle(batches);
  }
  if (shard_.worldSize == 1 || batches.empty()) return batches;
  std::vector<PlannedBatch> mine;
  const size_t n = batches.size(), world = static_cast<size_t>(shard_.worldSize);
  for (size_t j = 0; j < static_cast<size_t>(batchesPerEpoch()); ++j) mine.push_back(batches[(static_cast<size_t>(shard_.rank) + j * world) % n]);
  return mine;
}

std::vector<ShapeSignature> BatchPlan::shapeSignatures() const {
  std::map<std::tuple<int, int, int>, long long> counts;
  for (const auto& b : buckets_) {
    const long long n = static_cast<long long>(b.items.size());
    if (n / b.batchSize > 0) counts[{b.resolution.width, b.resolution.height, b.batchSize}] += n / b.batchSize;
    if (n % b.batchSize) counts[{b.resolution.width, b.resolution.height, static_cast<int>(n % b.batchSize)}] += 1;
  }
  std::vector<ShapeSignature> out;
  for (const auto& [k, c] : counts) out.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), c});
  std::stable_sort(out.begin(), out.end(), [](const ShapeSignature& a, const ShapeSignature& b) {
    if (a.countPerEpoch != b.countPerEpoch) return a.countPerEpoch > b.countPerEpoch;
    return static_cast<long long>(a.width) * a.height * a.batchSize > static_cast<long long>(b.width) * b.height * b.batchSize;
  });
  return out;
}

}  // namespace sinter::data

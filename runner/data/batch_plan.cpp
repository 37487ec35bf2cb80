#include "data/batch_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "data/random.h"
#include "data/shuffled_index.h"

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
      buckets_.push_back({e.datasetIndex, dataset.datasets[e.datasetIndex].batchSize, e.choice.bucket, {}, {}, 0});
    }
    Bucket& b = buckets_[it->second];
    b.images.push_back(i);
    b.repeatsBefore.push_back(b.items);
    b.items += e.repeats;
  }
  std::stable_sort(buckets_.begin(), buckets_.end(), [](const Bucket& a, const Bucket& b) {
    return std::tie(a.datasetIndex, a.resolution) < std::tie(b.datasetIndex, b.resolution);
  });
  for (const auto& b : buckets_) {
    batchesBefore_.push_back(allBatchesPerEpoch_);
    allBatchesPerEpoch_ += b.batches();
  }
}

PlannedBatch BatchPlan::batchAt(long long epoch, long long index) const {
  if (index < 0 || index >= batchesPerEpoch())
    throw std::out_of_range("batch " + std::to_string(index) + " of an epoch of " + std::to_string(batchesPerEpoch()));
  // This rank's index-th batch is the one-process order's (rank + index * ranks), the last round
  // wrapping to the epoch's first batches.
  const auto all = static_cast<std::uint64_t>(allBatchesPerEpoch_);
  const std::uint64_t inEpoch =
      (static_cast<std::uint64_t>(shard_.rank) + static_cast<std::uint64_t>(index) * static_cast<std::uint64_t>(shard_.worldSize)) % all;
  const auto e = static_cast<std::uint64_t>(epoch);
  const long long ordered =
      static_cast<long long>(shuffled_ ? ShuffledIndex(all, deriveSeed(seed_, e, kOrderStream)).at(inEpoch) : inEpoch);
  const size_t bi = static_cast<size_t>(std::upper_bound(batchesBefore_.begin(), batchesBefore_.end(), ordered) - batchesBefore_.begin()) - 1;
  const Bucket& b = buckets_[bi];
  const long long first = (ordered - batchesBefore_[bi]) * b.batchSize;
  const long long last = std::min(b.items, first + b.batchSize);
  std::optional<ShuffledIndex> items;
  if (shuffled_) items.emplace(static_cast<std::uint64_t>(b.items), deriveSeed(seed_, e, bi));
  PlannedBatch out{b.datasetIndex, b.resolution, {}};
  for (long long k = first; k < last; ++k) {
    const long long item = items ? static_cast<long long>(items->at(static_cast<std::uint64_t>(k))) : k;
    // The image whose repeats hold this item.
    const size_t image = static_cast<size_t>(std::upper_bound(b.repeatsBefore.begin(), b.repeatsBefore.end(), item) - b.repeatsBefore.begin()) - 1;
    out.imageIndices.push_back(b.images[image]);
  }
  return out;
}

std::vector<PlannedBatch> BatchPlan::epochBatches(long long epoch) const {
  std::vector<PlannedBatch> batches;
  for (long long j = 0; j < batchesPerEpoch(); ++j) batches.push_back(batchAt(epoch, j));
  return batches;
}

std::vector<ShapeSignature> BatchPlan::shapeSignatures() const {
  std::map<std::tuple<int, int, int>, long long> counts;
  for (const auto& b : buckets_) {
    const long long n = b.items;
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

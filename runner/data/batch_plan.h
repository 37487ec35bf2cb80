#pragma once
// Which images form each batch, epoch by epoch, and how many steps a run takes, counted as
// sd-scripts counts them. The order is a pure function of (seed, epoch), so a resumed run
// continues exactly from three plain integers (seed, epoch, index within the epoch).
#include <cstdint>
#include <optional>
#include <vector>

#include "data/buckets.h"
#include "data/dataset.h"

namespace sinter::data {

struct PlannedBatch {
  int datasetIndex = 0;
  Resolution bucket;
  std::vector<size_t> imageIndices;  // into Dataset::images; may repeat an image (repeats)
};

// Where the data loader stands. `epoch` is 0-based; sd-scripts prints it 1-based.
struct DataOrderState {
  std::uint64_t seed = 0;
  long long epoch = 0;
  long long indexInEpoch = 0;  // batches of this epoch already handed out
  bool operator==(const DataOrderState& o) const {
    return seed == o.seed && epoch == o.epoch && indexInEpoch == o.indexInEpoch;
  }
};

// A batch shape the model will see: bucket size and batch size (a bucket's last batch may be
// smaller), with how often it occurs per epoch. The compile engine pre-captures frequent ones.
struct ShapeSignature {
  int width = 0;
  int height = 0;
  int batchSize = 0;
  long long countPerEpoch = 0;
  // A joined pass of this many micro-batches of batchSize / microBatches each (batched gradient
  // accumulation, data/joined_batch.h); 1 for the plan's own batches.
  int microBatches = 1;
};

struct TrainingLength {
  long long batchesPerEpoch = 0;  // len(train_dataloader)
  long long stepsPerEpoch = 0;    // ceil(batches / gradient_accumulation_steps)
  long long maxTrainSteps = 0;    // max_train_epochs * stepsPerEpoch when epochs are given
  long long numEpochs = 0;        // ceil(maxTrainSteps / stepsPerEpoch)
};

// sd-scripts' train_network.py arithmetic (single process).
TrainingLength computeTrainingLength(long long batchesPerEpoch, std::optional<long long> maxTrainEpochs,
                                     long long maxTrainSteps, int gradientAccumulationSteps);

// The loader position at the start of optimizer step `globalStep` (0-based): an epoch has
// stepsPerEpoch steps, its last one taking the remaining micro-batches.
DataOrderState positionForStep(std::uint64_t seed, long long globalStep, long long batchesPerEpoch,
                               int gradientAccumulationSteps);

// The part of every epoch one of several ranks trains on, as accelerate shards sd-scripts' data
// loader (even_batches): rank r takes the one-process order's batches r, r+N, r+2N, ..., the last
// round filled up from the epoch's first batches, so every rank has ceil(batches / N) of them.
struct BatchShard {
  int rank = 0;
  int worldSize = 1;
};

// Which of the dataset's images a plan cuts into batches.
enum class PlanImages {
  Training,    // every image but the held-out ones; shuffled every epoch
  Validation,  // the images validation_split holds out (with repeats), in a fixed order: every
               // validation pass sees the same batches, as sd-scripts' unshuffled validation loader
};

class BatchPlan {
 public:
  BatchPlan(const Dataset& dataset, std::uint64_t seed, BatchShard shard = {}, PlanImages images = PlanImages::Training);

  // This rank's batches per epoch (len(train_dataloader) after accelerate's prepare).
  long long batchesPerEpoch() const { return (allBatchesPerEpoch_ + shard_.worldSize - 1) / shard_.worldSize; }
  // Every rank's together: one process's epoch.
  long long allBatchesPerEpoch() const { return allBatchesPerEpoch_; }
  const BatchShard& shard() const { return shard_; }
  std::uint64_t seed() const { return seed_; }
  // Every epoch: each bucket's images (with repeats) shuffled, cut into batches of the
  // dataset's batch size, and all batches of all datasets shuffled together; this rank's share.
  // Batch `index` (< batchesPerEpoch()) of `epoch`, computed alone: repeats are counted, never
  // listed, so an epoch of a subset repeated a million times costs no memory (shuffled_index.h).
  PlannedBatch batchAt(long long epoch, long long index) const;
  // Every batch of an epoch, in order (for tests and small plans: it lists the whole epoch).
  std::vector<PlannedBatch> epochBatches(long long epoch) const;
  // Distinct signatures of the whole epoch (every rank plans the same ones), most frequent first
  // (then larger area first).
  std::vector<ShapeSignature> shapeSignatures() const;

 private:
  struct Bucket {
    int datasetIndex;
    int batchSize;
    Resolution resolution;
    std::vector<size_t> images;            // image indices, in dataset order
    std::vector<long long> repeatsBefore;  // per image: the repeats of the images before it
    long long items = 0;                   // images x repeats
    long long batches() const { return (items + batchSize - 1) / batchSize; }
  };
  std::vector<Bucket> buckets_;
  std::vector<long long> batchesBefore_;  // per bucket: the batches of the buckets before it
  std::uint64_t seed_;
  BatchShard shard_;
  bool shuffled_ = true;
  long long allBatchesPerEpoch_ = 0;
};

}  // namespace sinter::data

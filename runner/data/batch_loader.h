#pragma once
// Yields training batches in the plan's order: images (or cached latents) of one bucket shape,
// processed captions and their token ids (or cached text-encoder outputs), SDXL's size/crop conditioning, the
// per-sample loss weights and the loss masks. Worker threads decode and resize ahead; every random decision comes
// from (seed, epoch, index, slot), so batches are the same whatever the number of threads and
// a resumed loader continues exactly.
#include <torch/torch.h>

#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/batch_plan.h"
#include "data/dataset.h"
#include "data/latent_cache.h"
#include "data/text_cache.h"

namespace sinter::data {

// Token ids by the name of the encoder input they are for ("clip_l", "t5", ...), on the host.
using TokenIds = std::map<std::string, torch::Tensor>;
// A family's tokenization of a batch's captions (deterministic: no random draws, so the batches
// are the same whichever thread makes them).
using CaptionTokenizer = std::function<TokenIds(const std::vector<std::string>& captions)>;

struct Batch {
  long long epoch = 0;         // 0-based
  long long indexInEpoch = 0;  // this batch's index within its epoch
  int datasetIndex = 0;
  Resolution bucket;
  std::vector<size_t> imageIndices;
  torch::Tensor images;   // [B, 3, H, W] float in [-1, 1]; undefined when latents are cached
  torch::Tensor latents;  // [B, C, H/8, W/8] from the latent cache; undefined otherwise
  std::vector<std::string> captions;  // after shuffling/dropout for this step
  // The captions as the family's text encoders take them (LoaderOptions::tokenize), so that a step's
  // inputs are tensors; empty when the text outputs are cached or the loader has no tokenizer.
  TokenIds tokenIds;
  TextOutputs textOutputs;            // stacked cached outputs; empty when not cached
  // SDXL's conditioning, as sd-scripts passes it: [B, 2] int64 (height, width) / (top, left).
  torch::Tensor originalSizesHW;
  torch::Tensor cropTopLefts;
  torch::Tensor targetSizesHW;
  torch::Tensor lossWeights;  // [B] float: prior_loss_weight for regularisation images, else 1
  // [B, H, W] float in [0, 1] at the bucket size (data/loss_mask.h), flipped and cropped with the
  // images; ones for images without a mask. Defined in every batch of a dataset with loss masks.
  torch::Tensor lossMasks;
  std::vector<bool> flipped;
  double networkMultiplier = 1.0;
  // How many micro-batches of one shape this batch joins (batched gradient accumulation,
  // data/joined_batch.h): each draws its random values in the step as its own pass would. 1: a
  // batch as the loader makes it.
  int microBatches = 1;
};

struct LoaderOptions {
  int workers = 0;  // max_data_loader_n_workers; 0 builds batches on the calling thread
  long long maxTrainSteps = 0;         // for token warm-up
  int gradientAccumulationSteps = 1;   // to know the global step of a batch
  CaptionTokenizer tokenize;           // the family's; empty: batches carry captions only
};

class BatchLoader {
 public:
  BatchLoader(const Dataset& dataset, const BatchPlan& plan, LoaderOptions options,
              const LatentCache* latents = nullptr, const TextCache* texts = nullptr);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // Continues from a saved position (drops anything prefetched).
  void seek(const DataOrderState& state);
  // The next batch; after an epoch's last batch comes the next epoch's first.
  Batch next();
  // The position of the batch next() returns next: save this to resume.
  DataOrderState state() const { return position_; }

  // Builds one batch directly (what the workers run).
  Batch makeBatch(long long epoch, long long indexInEpoch) const;

 private:
  void advance(DataOrderState& s) const;
  void drain();

  const Dataset& dataset_;
  const BatchPlan& plan_;
  LoaderOptions options_;
  const LatentCache* latents_;
  const TextCache* texts_;
  bool lossMasks_;                 // the dataset has loss masks: every batch carries them
  DataOrderState position_;        // next batch to hand out
  DataOrderState scheduled_;       // next batch to schedule on a worker
  std::deque<std::future<Batch>> pending_;
};

}  // namespace sinter::data

#pragma once
// The input shapes of a run's step and the static input buffers kept for each: a captured graph
// reads its inputs from the same memory on every replay, so each shape's buffers are made once and
// reused. The batch plan's signatures (known before step 1) say which shapes will come.
#include <torch/torch.h>

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "data/batch_plan.h"

namespace sinter::train {

// One input shape of the step: batch size, latent height and width, text tokens, and how many
// micro-batches the batch joins (batched gradient accumulation: each draws its own random values,
// so a joined shape's step is another graph than a plain batch of that size).
struct StepShape {
  int64_t batch = 0, height = 0, width = 0, tokens = 0;
  int64_t microBatches = 1;
  bool operator<(const StepShape& o) const {
    return std::tie(batch, height, width, tokens, microBatches) < std::tie(o.batch, o.height, o.width, o.tokens, o.microBatches);
  }
  bool operator==(const StepShape& o) const { return !(*this < o) && !(o < *this); }
  // "batch 1, latents 128x128, 77 tokens" (", 2 micro-batches joined"), for the log and the warm-up events.
  std::string describe() const;
};

using StaticBuffers = std::map<std::string, torch::Tensor>;

// Share of an epoch's batches whose shape is among the first `n` of `signatures` (the batch
// plan's, most frequent first): what graphs captured for those cover.
double shareOfBatches(const std::vector<data::ShapeSignature>& signatures, size_t n);

class ShapePlan {
 public:
  // The buffers of `shape`, made by `make` the first time the shape is seen.
  StaticBuffers& buffers(const StepShape& shape, const std::function<StaticBuffers()>& make);
  size_t shapesWithBuffers() const { return buffers_.size(); }

 private:
  std::map<StepShape, StaticBuffers> buffers_;
};

}  // namespace sinter::train

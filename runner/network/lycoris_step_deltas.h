#pragma once
// LyCORIS deltas built once per optimizer step. LyCORIS rebuilds a LoHa, LoKr or DoRA delta (a
// full-size weight formed from small factors) in every forward pass; with several micro-batches
// per step (gradient accumulation) that is the same delta built again from unchanged tensors.
// Here each such module's delta is built after the update into a persistent leaf that the
// micro-batches' forward passes use; its gradient adds up over the micro-batches, and before the
// next update it is carried back to the trained tensors through one rebuild. Rank dropout's mask
// is drawn once per step (LyCORIS draws one per forward pass); module dropout stays per forward.
// All device work into persistent tensors, so it can sit inside a captured step.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

#include "network/lora_network.h"

namespace sinter::network {

class LycorisStepDeltas {
 public:
  // The network's modules whose rebuild forms a full-size delta (models::lycorisBuildsFullDelta);
  // their deltas in `computeDtype`. Nothing changes until start().
  LycorisStepDeltas(const LoraNetwork& network, torch::Dtype computeDtype);
  ~LycorisStepDeltas();

  size_t size() const { return entries_.size(); }
  int64_t deltaElements() const;  // the persistent deltas' size (twice over: each has a gradient)

  // The forward passes take the step deltas from now on (built here from the current tensors).
  void start();
  // The deltas of the current tensors (after an update, or after the tensors were loaded).
  void refresh();
  // The step's accumulated delta gradients carried to the trained tensors (added to their
  // gradients), then zeroed: before the update.
  void backpropagate();
  // What refresh() and backpropagate() change (for undoing warm-up steps).
  std::vector<torch::Tensor> mutableTensors() const;

 private:
  struct Entry {
    std::shared_ptr<models::LycorisAdapter> adapter;
    std::function<torch::Tensor()> baseWeight;  // the frozen weight as the forward uses it
    torch::Tensor delta;                        // the persistent leaf (its grad persistent too)
    torch::Tensor rowMask;                      // rank dropout's mask for the step, or undefined
  };
  torch::Tensor build(const Entry& e) const;
  std::vector<Entry> entries_;
  torch::Dtype computeDtype_;
};

}  // namespace sinter::network

#pragma once
// Weights a method derives from its trained tensors once per optimizer step rather than in every
// forward pass (train/methods/lora_method.h: LyCORIS deltas under gradient accumulation). The
// micro-batches' backward passes leave gradients on the derived weights; the update carries them
// to the trained tensors first and derives the next step's weights last. Device work only: it may
// be captured with the step.
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace sinter::train {

struct StepDerivedWeights {
  std::function<void()> backpropagate;  // before the update: the derived weights' gradients to the trained tensors
  std::function<void()> refresh;        // after the update: the next step's derived weights
  std::function<std::vector<torch::Tensor>()> mutableTensors;  // what both change (undoing warm-up steps)
};

}  // namespace sinter::train

#pragma once
// scale_weight_norms: sd-scripts' apply_max_norm_regularization. After each optimizer step, every
// LoRA module's update W = up @ down * (alpha / rank) whose Frobenius norm exceeds the limit is
// scaled back to it, by multiplying lora_up and lora_down each by sqrt(limit / norm). All device
// work, into persistent tensors, so it can sit inside a captured step.
#include <torch/torch.h>

#include <vector>

#include "network/lora_network.h"

namespace sinter::network {

// The update a module adds to its layer's weight, alpha / rank included: [out, in] for a Linear,
// [out, in, kh, kw] for a Conv2d (a 3x3 lora_down composed with the 1x1 lora_up).
torch::Tensor loraWeightDelta(const models::LoraAdapter& adapter);

class LoraMaxNorm {
 public:
  LoraMaxNorm(const LoraNetwork& network, double maxNorm);

  // Scales the modules over the limit (in place, without autograd) and records the figures.
  void apply();
  // [3] float32 on the weights' device, for the step just applied: how many modules were scaled,
  // the average and the largest norm after scaling (sd-scripts' keys_scaled, mean_norm, maximum_norm).
  const torch::Tensor& figures() const { return figures_; }
  double maxNorm() const { return maxNorm_; }

 private:
  std::vector<std::shared_ptr<models::LoraAdapter>> adapters_;
  double maxNorm_;
  torch::Tensor figures_;
};

}  // namespace sinter::network

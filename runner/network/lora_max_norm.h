#pragma once
// scale_weight_norms: sd-scripts' apply_max_norm_regularization (and lycoris.kohya's). After each
// optimizer step, every module's update whose Frobenius norm exceeds the limit is scaled back to
// it: a LoRA module by multiplying lora_up and lora_down each by sqrt(limit / norm); a LyCORIS
// LoCon or LoHa module by multiplying its scalar (use_scalar) or the tensor the scalar is folded
// into by limit / norm; a LoKr module by multiplying each of its n factors by (limit / norm)^(1/n).
// IA3 and full modules have no max norm in LyCORIS and are left out (a network of only those
// keeps its figures at 0). All device work, into
// persistent tensors, so it can sit inside a captured step.
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
  // the average and the largest norm after scaling (sd-scripts' keys_scaled, mean_norm, maximum_norm;
  // lycoris.kohya reports all three as 0 when no module was scaled).
  const torch::Tensor& figures() const { return figures_; }
  double maxNorm() const { return maxNorm_; }

 private:
  std::vector<std::shared_ptr<models::LoraAdapter>> adapters_;
  std::vector<std::shared_ptr<models::LycorisAdapter>> lycoris_;
  bool isLycoris_ = false;
  double maxNorm_;
  torch::Tensor figures_;
};

}  // namespace sinter::network

#pragma once
// The Linear layer every model uses, so that a LoRA adapter can be attached to any of them
// without wrapping or renaming: the module keeps the checkpoint's key (".weight", ".bias").
#include <torch/torch.h>

#include <memory>

#include "models/served_weight.h"

namespace sinter::models {

// y += up(dropout(down(x))) * (alpha / rank) * multiplier  (kohya's networks.lora)
struct LoraAdapter {
  torch::Tensor down;  // [rank, in]
  torch::Tensor up;    // [out, rank]
  double alpha = 1.0;
  double dropout = 0.0;     // applied to lora_down's output while training
  double multiplier = 1.0;
  // Copies of down and up in the compute dtype that the training step keeps current
  // (train/base/compute_copies.h); undefined, or of another dtype than the activations: the forward
  // pass casts down and up itself.
  torch::Tensor downCompute, upCompute;
  double scale() const { return alpha / static_cast<double>(down.size(0)); }
  torch::Tensor downIn(torch::ScalarType dtype) const { return inDtype(down, downCompute, dtype); }
  torch::Tensor upIn(torch::ScalarType dtype) const { return inDtype(up, upCompute, dtype); }

 private:
  static torch::Tensor inDtype(const torch::Tensor& weight, const torch::Tensor& copy, torch::ScalarType dtype) {
    return copy.defined() && copy.scalar_type() == dtype ? copy : weight.to(dtype);
  }
};

class LinearImpl : public torch::nn::Module {
 public:
  LinearImpl(int64_t inFeatures, int64_t outFeatures, bool withBias = true);
  torch::Tensor forward(const torch::Tensor& x);

  int64_t inFeatures() const { return weight.size(1); }
  int64_t outFeatures() const { return weight.size(0); }

  torch::Tensor weight;  // [out, in]
  torch::Tensor bias;    // [out] or undefined
  std::shared_ptr<LoraAdapter> lora;  // null: a plain Linear
  // Set (fp8_base, blocks_to_swap): the weight comes from here, in the activations' dtype, and
  // `weight` holds its stored form (float8 on the device, or the host copy of a swapped block).
  std::shared_ptr<ServedWeight> served;
};
TORCH_MODULE(Linear);

// Whether any Linear under `root` has an adapter that draws random numbers (dropout > 0): then a
// checkpointed recomputation needs the forward's RNG state.
bool anyLoraDropout(torch::nn::Module& root);

}  // namespace sinter::models

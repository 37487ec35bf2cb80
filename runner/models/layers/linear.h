#pragma once
// The Linear layer every model uses, so that a LoRA adapter can be attached to any of them
// without wrapping or renaming: the module keeps the checkpoint's key (".weight", ".bias").
#include <torch/torch.h>

#include <memory>

#include "models/adapters/lora_adapter.h"
#include "models/weights/served_weight.h"

namespace sinter::models {

struct LycorisAdapter;  // models/adapters/lycoris_adapter.h

class LinearImpl : public torch::nn::Module {
 public:
  LinearImpl(int64_t inFeatures, int64_t outFeatures, bool withBias = true);
  torch::Tensor forward(const torch::Tensor& x);

  int64_t inFeatures() const { return weight.size(1); }
  int64_t outFeatures() const { return weight.size(0); }

  torch::Tensor weight;  // [out, in]
  torch::Tensor bias;    // [out] or undefined
  std::shared_ptr<LoraAdapter> lora;  // null: a plain Linear
  std::shared_ptr<LycorisAdapter> lycoris;  // set instead of lora for a lycoris.kohya network
  // Set (fp8_base, blocks_to_swap): the weight comes from here, in the activations' dtype, and
  // `weight` holds its stored form (float8 on the device, or the host copy of a swapped block).
  std::shared_ptr<ServedWeight> served;
};
TORCH_MODULE(Linear);

// Whether any Linear or Conv2d under `root` has an adapter (LoRA or LyCORIS) that draws random numbers (a dropout
// > 0): then a checkpointed recomputation needs the forward's RNG state.
bool anyLoraDropout(torch::nn::Module& root);

}  // namespace sinter::models

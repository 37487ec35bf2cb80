#pragma once
// The Conv2d of the SDXL UNet's ResBlocks, Downsample and Upsample, so that a LoRA adapter can be
// attached to it as to a Linear (sd-scripts' conv_dim): the module keeps the checkpoint's keys
// (".weight", ".bias") and torch.nn.Conv2d's initialisation.
#include <torch/torch.h>

#include <memory>

#include "models/adapters/lora_adapter.h"
#include "models/weights/served_weight.h"

namespace sinter::models {

struct LycorisAdapter;  // models/adapters/lycoris_adapter.h

class Conv2dImpl : public torch::nn::Module {
 public:
  Conv2dImpl(int64_t inChannels, int64_t outChannels, int64_t kernelSize, int64_t stride = 1, int64_t padding = 0);
  // conv(x) and, with an adapter, + up(dropouts(down(x))) * scale * multiplier, where down is a
  // conv of this module's kernel, stride and padding and up a 1x1 conv (sd-scripts' LoRAModule).
  torch::Tensor forward(const torch::Tensor& x);

  int64_t inChannels() const { return weight.size(1); }
  int64_t outChannels() const { return weight.size(0); }
  int64_t kernelSize() const { return weight.size(2); }

  torch::Tensor weight;  // [out, in, k, k]
  torch::Tensor bias;    // [out]
  int64_t stride = 1, padding = 0;
  std::shared_ptr<LoraAdapter> lora;  // null: a plain Conv2d
  std::shared_ptr<LycorisAdapter> lycoris;  // set instead of lora for a lycoris.kohya network
  // Set (SDXL's fp8_base): the kernel comes from here, in the activations' dtype, and `weight`
  // holds its float8 form (models/layers/frozen_conv2d.h).
  std::shared_ptr<ServedWeight> served;
};
TORCH_MODULE(Conv2d);

}  // namespace sinter::models

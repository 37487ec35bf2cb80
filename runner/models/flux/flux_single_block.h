#pragma once
// single_blocks.N (BFL's SingleStreamBlock): one stream over [txt, img] with parallel attention
// and MLP: linear1 makes qkv and the MLP's input at once, linear2 takes the attention output and
// the activated MLP input together.
#include <torch/torch.h>

#include "models/flux/flux_config.h"
#include "models/flux/flux_layers.h"

namespace sinter::models {

class FluxSingleBlockImpl : public torch::nn::Module {
 public:
  explicit FluxSingleBlockImpl(const FluxConfig& config);

  // x: [B, T + L, hidden]; vec [B, hidden] (Chroma: the block's 3 modulation vectors [B, 3, hidden]);
  // rotations and mask as the double block's. Returns [B, T + L, hidden].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& vec, const torch::Tensor& rotations,
                        const torch::Tensor& mask = {});

  Linear linear1{nullptr}, linear2{nullptr};
  FluxQkNorm norm{nullptr};
  FluxModulation modulation{nullptr};  // none in Chroma
  bool fused = false;  // on CUDA: QK norm + RoPE, LayerNorm+modulate, the GELU join, the gated residual fused

 private:
  int64_t hidden_, mlpHidden_, heads_;
};
TORCH_MODULE(FluxSingleBlock);

}  // namespace sinter::models

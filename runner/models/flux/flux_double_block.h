#pragma once
// double_blocks.N (BFL's DoubleStreamBlock): the image and text streams keep their own weights
// (img_* / txt_*) and modulation, and attend jointly over the sequence [txt, img].
#include <torch/torch.h>

#include <utility>

#include "models/flux/flux_attention.h"
#include "models/flux/flux_config.h"
#include "models/flux/flux_layers.h"

namespace sinter::models {

class FluxDoubleBlockImpl : public torch::nn::Module {
 public:
  explicit FluxDoubleBlockImpl(const FluxConfig& config);

  // img: [B, L, hidden], txt: [B, T, hidden], vec: [B, hidden] (Chroma: the block's 12 modulation
  // vectors [B, 12, hidden], the image stream's 6 then the text's), rotations: RoPE of the [txt, img]
  // ids; mask: undefined or [B, 1, 1, T + L] boolean. Returns the new (img, txt).
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& img, const torch::Tensor& txt,
                                                  const torch::Tensor& vec, const torch::Tensor& rotations,
                                                  const torch::Tensor& mask = {});

  FluxModulation img_mod{nullptr}, txt_mod{nullptr};  // none in Chroma
  FluxSelfAttention img_attn{nullptr}, txt_attn{nullptr};
  FluxMlp img_mlp{nullptr}, txt_mlp{nullptr};
  bool fused = false;  // on CUDA: QK norm + RoPE, LayerNorm+modulate, the gated residuals as one kernel each way
};
TORCH_MODULE(FluxDoubleBlock);

}  // namespace sinter::models

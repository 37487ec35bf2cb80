#pragma once
// FLUX's attention parts: SelfAttention's weights (qkv, norm, proj; the blocks call its pieces
// directly, as BFL's do), splitting a fused qkv projection into heads, and attention with RoPE
// over the joint txt+img sequence.
#include <torch/torch.h>

#include "models/flux_layers.h"
#include "models/linear.h"

namespace sinter::models {

struct FluxQkv {
  torch::Tensor q, k, v;  // [B, heads, L, headDim]
};

// [B, L, 3 * heads * headDim] ("B L (K H D)") -> q, k, v as [B, heads, L, headDim].
FluxQkv splitFluxQkv(const torch::Tensor& qkv, int64_t heads);

// RoPE on q and k, softmax(q k^T / sqrt(d)) v, heads merged back: [B, L, heads * headDim].
// mask: undefined, or boolean [B, 1, 1, L] (false: a padding key no query attends to).
torch::Tensor fluxAttention(const FluxQkv& qkv, const torch::Tensor& rotations, const torch::Tensor& mask = {});

class FluxSelfAttentionImpl : public torch::nn::Module {
 public:
  FluxSelfAttentionImpl(int64_t hidden, int64_t heads, bool qkvBias);
  // q, k, v of x, the queries and keys RMS-normalised (in v's dtype, as BFL's QKNorm returns them).
  FluxQkv normalizedQkv(const torch::Tensor& x);
  Linear qkv{nullptr}, proj{nullptr};
  FluxQkNorm norm{nullptr};

 private:
  int64_t heads_;
};
TORCH_MODULE(FluxSelfAttention);

}  // namespace sinter::models

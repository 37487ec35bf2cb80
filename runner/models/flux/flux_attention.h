#pragma once
// FLUX's attention parts: SelfAttention's weights (qkv, norm, proj; the blocks call its pieces
// directly, as BFL's do), a fused qkv projection split into heads with q and k normalised and
// turned by RoPE, and attention over the joint txt+img sequence.
#include <torch/torch.h>

#include "kernels/shared_gradient.h"
#include "models/flux/flux_layers.h"
#include "models/layers/linear.h"

namespace sinter::models {

struct FluxQkv {
  torch::Tensor q, k, v;  // [B, heads, L, headDim]
};

// [B, L, 3 * heads * headDim] ("B L (K H D)") -> q, k, v as [B, heads, L, headDim].
FluxQkv splitFluxQkv(const torch::Tensor& qkv, int64_t heads);

// One stream's q, k, v from its qkv projection [B, L, 3 * heads * headDim]: q and k RMS-normalised
// by `norm` (BFL's QKNorm) and turned by RoPE (`rotations` of these L tokens, fluxRopeRotations'
// [B or 1, 1, L, headDim/2, 2, 2]). RoPE acts per token, so a stream's tokens may be turned before
// the streams are joined. fused: one CUDA kernel each way (kernels/fused_kernels.h) in place of the
// stock operators, within the dtype's rounding of them, writing qkvProjected's gradient where
// `gradientInto` says (a part of a split sharing its gradient).
FluxQkv normedRotatedQkv(const torch::Tensor& qkvProjected, FluxQkNormImpl& norm, const torch::Tensor& rotations,
                         int64_t heads, bool fused, const kernels::GradientInto& gradientInto = {});
// Whether normedRotatedQkv takes the fused kernel for these projections.
bool fusedQkNormRopeTakes(const torch::Tensor& qkvProjected, const FluxQkNormImpl& norm, bool fused);

// softmax(q k^T / sqrt(d)) v with q and k already turned, heads merged back: [B, L, heads * headDim].
// mask: undefined, or boolean [B, 1, 1, L] (false: a padding key no query attends to).
torch::Tensor fluxAttention(const FluxQkv& rotated, const torch::Tensor& mask = {});
// The same before the heads are merged: [B, L, heads, headDim] (a transposed view, not copied).
torch::Tensor fluxAttentionByToken(const FluxQkv& rotated, const torch::Tensor& mask = {});

class FluxSelfAttentionImpl : public torch::nn::Module {
 public:
  FluxSelfAttentionImpl(int64_t hidden, int64_t heads, bool qkvBias);
  int64_t heads() const { return heads_; }
  Linear qkv{nullptr}, proj{nullptr};
  FluxQkNorm norm{nullptr};

 private:
  int64_t heads_;
};
TORCH_MODULE(FluxSelfAttention);

// The double block's q, k, v over the joint sequence [txt, img]: each stream's qkv(x) normed and
// turned by its own weights, `rotations` the joint sequence's. Fused, one kernel per stream writes
// its rows of the joint tensors (kernels::fluxJointQkNormRope); else normedRotatedQkv per stream,
// then concatenated.
FluxQkv jointRotatedQkv(FluxSelfAttentionImpl& txtAttn, const torch::Tensor& txtIn, FluxSelfAttentionImpl& imgAttn,
                        const torch::Tensor& imgIn, const torch::Tensor& rotations, bool fused);

}  // namespace sinter::models

#include "models/flux/flux_single_block.h"

#include "kernels/fused_kernels.h"
#include "models/flux/flux_attention.h"

namespace sinter::models {

FluxSingleBlockImpl::FluxSingleBlockImpl(const FluxConfig& c)
    : hidden_(c.hiddenSize), mlpHidden_(c.mlpHiddenDim()), heads_(c.numHeads) {
  linear1 = register_module("linear1", Linear(hidden_, 3 * hidden_ + mlpHidden_));
  linear2 = register_module("linear2", Linear(hidden_ + mlpHidden_, hidden_));
  norm = register_module("norm", FluxQkNorm(c.headDim()));
  if (!c.chroma()) modulation = register_module("modulation", FluxModulation(hidden_, /*isDouble=*/false));
}

torch::Tensor FluxSingleBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& vec,
                                           const torch::Tensor& rotations, const torch::Tensor& mask) {
  const FluxModulationOut mod = modulation ? modulation(vec)[0] : fluxModulationFromVectors(vec)[0];  // Chroma: [B, 3, hidden]
  const torch::Tensor projected = linear1(mod.normModulate(x, fused));
  const bool fusedJoin = fluxKernelsTake(x, fused);
  // Where both of its consumers are fused kernels, they write linear1's output gradient in place
  // (one buffer, no concatenation in the split's backward).
  const std::vector<int64_t> widths = {3 * hidden_, mlpHidden_};
  kernels::SplitSharingGradient qkvAndMlp;
  if (fusedJoin && fusedQkNormRopeTakes(projected, *norm, fused)) qkvAndMlp = kernels::splitSharingGradient(projected, widths);
  else qkvAndMlp.parts = projected.split_with_sizes(widths, -1);
  const FluxQkv rotated = normedRotatedQkv(qkvAndMlp.parts[0], *norm, rotations, heads_, fused, qkvAndMlp.into(0));
  // linear2 reads [attention, GELU(mlp)] side by side; fused, they are written there directly.
  const torch::Tensor joined =
      fusedJoin ? kernels::fluxAttentionGeluJoin(fluxAttentionByToken(rotated, mask), qkvAndMlp.parts[1], qkvAndMlp.into(1))
                : torch::cat({fluxAttention(rotated, mask), geluTanh(qkvAndMlp.parts[1])}, 2);
  return mod.gatedAdd(x, linear2(joined), fused);
}

}  // namespace sinter::models

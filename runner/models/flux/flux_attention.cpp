#include "models/flux/flux_attention.h"

#include "kernels/fused_kernels.h"
#include "models/layers/attention.h"
#include "models/flux/flux_rope.h"

namespace sinter::models {

FluxQkv splitFluxQkv(const torch::Tensor& qkv, int64_t heads) {
  const int64_t b = qkv.size(0), l = qkv.size(1);
  // [B, L, 3, H, D] -> [3, B, H, L, D]
  const torch::Tensor parts = qkv.reshape({b, l, 3, heads, -1}).permute({2, 0, 3, 1, 4});
  return {parts[0], parts[1], parts[2]};
}

bool fusedQkNormRopeTakes(const torch::Tensor& qkvProjected, const FluxQkNormImpl& norm, bool fused) {
  return fused && qkvProjected.is_cuda() && kernels::qkNormRopeFits(norm.query_norm->scale.size(0));
}

FluxQkv normedRotatedQkv(const torch::Tensor& qkvProjected, FluxQkNormImpl& norm, const torch::Tensor& rotations,
                         int64_t heads, bool fused, const kernels::GradientInto& gradientInto) {
  if (fusedQkNormRopeTakes(qkvProjected, norm, fused)) {
    const std::vector<torch::Tensor> qkv = kernels::fluxQkNormRope(qkvProjected, norm.query_norm->scale, norm.key_norm->scale,
                                                                   rotations, heads, gradientInto);
    return {qkv[0], qkv[1], qkv[2]};
  }
  FluxQkv out = splitFluxQkv(qkvProjected, heads);
  // QKNorm returns q and k in v's dtype, as BFL's does.
  out.q = applyFluxRope(norm.query_norm(out.q).to(out.v.scalar_type()), rotations);
  out.k = applyFluxRope(norm.key_norm(out.k).to(out.v.scalar_type()), rotations);
  return out;
}

torch::Tensor fluxAttentionByToken(const FluxQkv& rotated, const torch::Tensor& mask) {
  return scaledDotProductAttention(rotated.q, rotated.k, rotated.v, mask).transpose(1, 2);  // [B, H, L, D] -> [B, L, H, D]
}

torch::Tensor fluxAttention(const FluxQkv& rotated, const torch::Tensor& mask) {
  const torch::Tensor out = fluxAttentionByToken(rotated, mask);
  return out.reshape({out.size(0), out.size(1), -1});
}

FluxSelfAttentionImpl::FluxSelfAttentionImpl(int64_t hidden, int64_t heads, bool qkvBias) : heads_(heads) {
  qkv = register_module("qkv", Linear(hidden, 3 * hidden, qkvBias));
  norm = register_module("norm", FluxQkNorm(hidden / heads));
  proj = register_module("proj", Linear(hidden, hidden));
}

FluxQkv jointRotatedQkv(FluxSelfAttentionImpl& txtAttn, const torch::Tensor& txtIn, FluxSelfAttentionImpl& imgAttn,
                        const torch::Tensor& imgIn, const torch::Tensor& rotations, bool fused) {
  const torch::Tensor txtProjected = txtAttn.qkv(txtIn), imgProjected = imgAttn.qkv(imgIn);
  if (fusedQkNormRopeTakes(txtProjected, *txtAttn.norm, fused) && fusedQkNormRopeTakes(imgProjected, *imgAttn.norm, fused)) {
    const std::vector<torch::Tensor> qkv = kernels::fluxJointQkNormRope(
        txtProjected, txtAttn.norm->query_norm->scale, txtAttn.norm->key_norm->scale, imgProjected,
        imgAttn.norm->query_norm->scale, imgAttn.norm->key_norm->scale, rotations, txtAttn.heads());
    return {qkv[0], qkv[1], qkv[2]};
  }
  const int64_t t = txtIn.size(1);
  const FluxQkv txt = normedRotatedQkv(txtProjected, *txtAttn.norm, rotations.narrow(2, 0, t), txtAttn.heads(), fused);
  const FluxQkv img = normedRotatedQkv(imgProjected, *imgAttn.norm, rotations.narrow(2, t, imgIn.size(1)), imgAttn.heads(), fused);
  return {torch::cat({txt.q, img.q}, 2), torch::cat({txt.k, img.k}, 2), torch::cat({txt.v, img.v}, 2)};
}

}  // namespace sinter::models

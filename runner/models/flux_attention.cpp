#include "models/flux_attention.h"

#include "models/attention.h"
#include "models/flux_rope.h"

namespace sinter::models {

FluxQkv splitFluxQkv(const torch::Tensor& qkv, int64_t heads) {
  const int64_t b = qkv.size(0), l = qkv.size(1);
  // [B, L, 3, H, D] -> [3, B, H, L, D]
  const torch::Tensor parts = qkv.reshape({b, l, 3, heads, -1}).permute({2, 0, 3, 1, 4});
  return {parts[0], parts[1], parts[2]};
}

torch::Tensor fluxAttention(const FluxQkv& qkv, const torch::Tensor& rotations, const torch::Tensor& mask) {
  const torch::Tensor q = applyFluxRope(qkv.q, rotations), k = applyFluxRope(qkv.k, rotations);
  const torch::Tensor out = scaledDotProductAttention(q, k, qkv.v, mask);  // [B, H, L, D]
  return out.transpose(1, 2).reshape({out.size(0), out.size(2), -1});
}

FluxSelfAttentionImpl::FluxSelfAttentionImpl(int64_t hidden, int64_t heads, bool qkvBias) : heads_(heads) {
  qkv = register_module("qkv", Linear(hidden, 3 * hidden, qkvBias));
  norm = register_module("norm", FluxQkNorm(hidden / heads));
  proj = register_module("proj", Linear(hidden, hidden));
}

FluxQkv FluxSelfAttentionImpl::normalizedQkv(const torch::Tensor& x) {
  FluxQkv out = splitFluxQkv(qkv(x), heads_);
  out.q = norm->query_norm(out.q).to(out.v.scalar_type());
  out.k = norm->key_norm(out.k).to(out.v.scalar_type());
  return out;
}

}  // namespace sinter::models

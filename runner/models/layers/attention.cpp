#include "models/layers/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/shared_gradient.h"
#include "models/layers/joint_linear.h"

namespace sinter::models {

#if TORCH_VERSION_MAJOR >= 2
#define SINTER_HAS_SDPA 1
#else
#define SINTER_HAS_SDPA 0
#endif

bool fusedAttentionAvailable() { return SINTER_HAS_SDPA; }

torch::Tensor scaledDotProductAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
#if SINTER_HAS_SDPA
  return at::scaled_dot_product_attention(q, k, v);
#else
  // libtorch 1.13 (Debian) has no fused attention: the same math, unfused.
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  return torch::matmul(torch::softmax(torch::matmul(q, k.transpose(-2, -1)) * scale, -1), v);
#endif
}

torch::Tensor scaledDotProductAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                        const torch::Tensor& mask) {
  if (!mask.defined()) return scaledDotProductAttention(q, k, v);
#if SINTER_HAS_SDPA
  return at::scaled_dot_product_attention(q, k, v, mask);
#else
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const torch::Tensor scores = (torch::matmul(q, k.transpose(-2, -1)) * scale)
                                   .masked_fill(mask.logical_not(), -std::numeric_limits<double>::infinity());
  return torch::matmul(torch::softmax(scores, -1), v);
#endif
}

torch::Tensor chunkedScaledDotProductAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                               int64_t maxScoreElements) {
  if (maxScoreElements <= 0) throw std::invalid_argument("chunkedScaledDotProductAttention: maxScoreElements must be positive");
  const int64_t n = q.size(-2);
  if (q.numel() == 0 || k.size(-2) == 0) return scaledDotProductAttention(q, k, v);
  // A query row's scores: one per key, in every batch entry and head.
  const int64_t scoresPerRow = q.numel() / (q.size(-1) * n) * k.size(-2);
  const int64_t rows = std::max<int64_t>(1, maxScoreElements / scoresPerRow);
  if (rows >= n) return scaledDotProductAttention(q, k, v);
  // Written chunk by chunk into one output, so the chunks' results are never held twice.
  std::vector<int64_t> outShape = q.sizes().vec();
  outShape.back() = v.size(-1);
  torch::Tensor out = torch::empty(outShape, q.options().dtype(v.scalar_type()));
  for (int64_t start = 0; start < n; start += rows) {
    const int64_t len = std::min(rows, n - start);
    out.narrow(-2, start, len).copy_(scaledDotProductAttention(q.narrow(-2, start, len), k, v));
  }
  return out;
}

CrossAttentionImpl::CrossAttentionImpl(int64_t queryDim, int64_t contextDim, int64_t heads, int64_t headDim)
    : heads_(heads) {
  const int64_t inner = heads * headDim;
  to_q = register_module("to_q", Linear(queryDim, inner, false));
  to_k = register_module("to_k", Linear(contextDim, inner, false));
  to_v = register_module("to_v", Linear(contextDim, inner, false));
  to_out = register_module("to_out", torch::nn::Sequential(Linear(inner, queryDim), torch::nn::Dropout(0.0)));
}

void CrossAttentionImpl::setJointQkv(bool enabled) {
  const char* env = std::getenv("SINTER_JOINT_QKV");
  jointQkv_ = enabled && !(env && std::string(env) == "0");
}

torch::Tensor CrossAttentionImpl::jointQkvProjection(const torch::Tensor& x) {
  if (!jointQkv_ || capturedSeparately_) return {};
  const std::vector<LinearImpl*> linears{to_q.get(), to_k.get(), to_v.get()};
  if (!jointLinearApplies(linears, x)) return {};
  const torch::Tensor joint = jointWeightRows(linears);
  if (!joint.defined()) {
    capturedSeparately_ = true;
    return {};
  }
  return jointLinearForward(linears, joint, x);
}

void CrossAttentionImpl::useContextKv(const torch::Tensor& context, const torch::Tensor& k, const torch::Tensor& v) {
  TORCH_CHECK(context.defined() && k.defined() && v.defined() && k.sizes().slice(0, 2) == context.sizes().slice(0, 2) &&
                  v.sizes().slice(0, 2) == context.sizes().slice(0, 2) && k.size(-1) == to_k->outFeatures() &&
                  v.size(-1) == to_v->outFeatures(),
              "CrossAttention: k ", k.sizes(), " and v ", v.sizes(), " are not to_k's and to_v's outputs on a context of ",
              context.sizes());
  kvContext_ = context;
  contextK_ = k;
  contextV_ = v;
}

void CrossAttentionImpl::dropContextKv() {
  kvContext_ = contextK_ = contextV_ = torch::Tensor();
}

torch::Tensor CrossAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& context) {
  const int64_t b = x.size(0);
  auto split = [&](const torch::Tensor& t) { return t.view({b, t.size(1), heads_, -1}).transpose(1, 2); };
  torch::Tensor q, k, v;
  const torch::Tensor qkv = context.defined() ? torch::Tensor() : jointQkvProjection(x);
  if (qkv.defined()) {
    // q, k and v as views of the joint output; their gradients are gathered into one buffer (a
    // copy each), where autograd would add three zero-filled tensors of the joint output's size.
    const kernels::SplitSharingGradient parts =
        kernels::splitSharingGradient(qkv, {to_q->outFeatures(), to_k->outFeatures(), to_v->outFeatures()});
    q = split(parts.parts[0]);
    k = split(parts.parts[1]);
    v = split(parts.parts[2]);
  } else if (context.defined() && context.is_same(kvContext_)) {
    q = split(to_q(x));
    k = split(contextK_);
    v = split(contextV_);
    dropContextKv();
  } else {
    const torch::Tensor& ctx = context.defined() ? context : x;
    q = split(to_q(x));
    k = split(to_k(ctx));
    v = split(to_v(ctx));
  }
  const torch::Tensor h = scaledDotProductAttention(q, k, v).transpose(1, 2).reshape({b, x.size(1), -1});
  return to_out->forward(h);
}

}  // namespace sinter::models

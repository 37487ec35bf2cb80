#pragma once
// softmax(q k^T / sqrt(d)) v, and the UNet's CrossAttention (attn1: self, attn2: on the text context).
#include <torch/torch.h>

#include "models/layers/linear.h"

namespace sinter::models {

// q: [b, heads, n, d], k/v: [b, heads, m, d] -> [b, heads, n, d]. The fused kernel where this
// libtorch has one (2.0+), otherwise the same math written out.
torch::Tensor scaledDotProductAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);
// The same with a boolean mask broadcastable to [b, heads, n, m]: true where a query may attend.
torch::Tensor scaledDotProductAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                        const torch::Tensor& mask);
bool fusedAttentionAvailable();

// scaledDotProductAttention over the query rows in chunks, so that no chunk's score matrix
// ([b, heads, rows, m]) exceeds `maxScoreElements` whichever kernel runs it (a math fallback holds
// it whole: SDXL's VAE mid-block at 1024x1024 is 16384 tokens, a 1 GiB fp32 matrix). Exact: each
// query row's softmax is over its own scores. One chunk (the plain call) where all rows fit.
torch::Tensor chunkedScaledDotProductAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                               int64_t maxScoreElements);

class CrossAttentionImpl : public torch::nn::Module {
 public:
  // contextDim == queryDim for self-attention.
  CrossAttentionImpl(int64_t queryDim, int64_t contextDim, int64_t heads, int64_t headDim);
  // context undefined: self-attention on x. x: [b, n, queryDim], context: [b, m, contextDim].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context = {});

  // Self-attention's q, k and v as one GEMM (models/layers/joint_linear.h) wherever that computes
  // what the three projections would: the U-Net's fused-kernel switch (the compile plan's) turns it
  // on; the environment's SINTER_JOINT_QKV=0 keeps it off, for measuring.
  void setJointQkv(bool enabled);
  bool jointQkv() const { return jointQkv_; }

  // Cross-attention's k and v on `context`, computed with every other cross-attention's by the
  // U-Net (models/layers/joint_context_kv.h): the next forward on that same context tensor uses
  // them instead of to_k and to_v, once. dropContextKv lets go of them unused.
  void useContextKv(const torch::Tensor& context, const torch::Tensor& k, const torch::Tensor& v);
  void dropContextKv();

  Linear to_q{nullptr}, to_k{nullptr}, to_v{nullptr};
  torch::nn::Sequential to_out{nullptr};  // to_out.0: Linear, to_out.1: Dropout

 private:
  // q, k and v side by side ([b, n, 3 inner]) from the joint projection, or undefined where it does not apply.
  torch::Tensor jointQkvProjection(const torch::Tensor& x);

  int64_t heads_;
  bool jointQkv_ = false;
  torch::Tensor kvContext_, contextK_, contextV_;  // from useContextKv, until used
  // Set once a CUDA graph was captured with the separate projections (the weights were not joined
  // yet): joining them later would free the buffers the graph reads.
  bool capturedSeparately_ = false;
};
TORCH_MODULE(CrossAttention);

}  // namespace sinter::models

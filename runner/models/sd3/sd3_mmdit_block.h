#pragma once
// The parts of SD 3's joint block, named after the checkpoint's keys (sd-scripts' sd3_models, after
// SAI's mmdit.py): AttentionLinears (qkv, proj, ln_q, ln_k), the adaLN-modulated stream block
// (SingleDiTBlock: adaLN_modulation.1, attn, attn2, mlp.fc1/fc2) and the joint block
// (context_block, x_block) that attends over [context, x] at once.
#include <torch/torch.h>

#include <utility>
#include <vector>

#include "models/layers/linear.h"
#include "models/sd3/sd3_mmdit_config.h"

namespace sinter::models {

// LayerNorm over the last dim without affine parameters, eps 1e-6 (norm1, norm2, norm_final).
torch::Tensor sd3LayerNorm(const torch::Tensor& x);
// x · (1 + scale) + shift, the vectors [B, hidden] broadcast over the tokens.
torch::Tensor sd3Modulate(const torch::Tensor& x, const torch::Tensor& shift, const torch::Tensor& scale);

// x · rsqrt(mean(x²) + 1e-6) · weight over the last dim, in x's dtype (sd3_models.RMSNorm).
class Sd3RmsNormImpl : public torch::nn::Module {
 public:
  explicit Sd3RmsNormImpl(int64_t dim);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;
};
TORCH_MODULE(Sd3RmsNorm);

struct Sd3Qkv {
  torch::Tensor q, k, v;  // [B, heads, L, 64]
};

// AttentionLinears: qkv(x) split into heads, q and k RMS-normalised per head (SD 3.5); proj after
// the attention (none in the last context block, pre_only).
class Sd3AttentionImpl : public torch::nn::Module {
 public:
  Sd3AttentionImpl(int64_t hidden, int64_t heads, bool qkNormRms, bool preOnly);
  Sd3Qkv qkv_heads(const torch::Tensor& x);
  Linear qkv{nullptr}, proj{nullptr};
  Sd3RmsNorm ln_q{nullptr}, ln_k{nullptr};

 private:
  int64_t heads_;
};
TORCH_MODULE(Sd3Attention);

// softmax(q kᵀ / 8) v, heads merged back: [B, L, hidden].
torch::Tensor sd3Attention(const Sd3Qkv& qkv);

// One stream of a joint block (SingleDiTBlock): its modulation from c, its q/k/v before the joint
// attention, and the residual updates after it.
class Sd3StreamBlockImpl : public torch::nn::Module {
 public:
  // preOnly: the last context block, which only gives its q/k/v (2 modulations, no proj or MLP).
  // selfAttention2: MMDiT-X's x block, with a second self-attention over x alone (9 modulations).
  Sd3StreamBlockImpl(const Sd3MmditConfig& config, bool preOnly, bool selfAttention2);

  // The modulation vectors [B, hidden] of adaLN_modulation.1(silu(c)), in sd-scripts' order:
  // shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp[, shift_msa2, scale_msa2, gate_msa2];
  // pre_only: shift_msa, scale_msa.
  std::vector<torch::Tensor> modulation(const torch::Tensor& c);
  // q/k/v of modulate(normed, shift_msa, scale_msa), and with attn2 of modulate(normed, shift_msa2,
  // scale_msa2): `normed` is norm1(x), taken once for both (pre_attention_x).
  Sd3Qkv preAttention(const torch::Tensor& normed, const std::vector<torch::Tensor>& mod);
  Sd3Qkv preAttention2(const torch::Tensor& normed, const std::vector<torch::Tensor>& mod);
  // x + gate_msa·proj(attended) [+ gate_msa2·attn2.proj(attended2)], then + gate_mlp·mlp(modulate(norm2(·))).
  torch::Tensor postAttention(const torch::Tensor& x, const torch::Tensor& attended, const std::vector<torch::Tensor>& mod,
                              const torch::Tensor& attended2 = {});
  bool preOnly() const { return preOnly_; }
  bool hasAttention2() const { return static_cast<bool>(attn2); }

  Sd3Attention attn{nullptr}, attn2{nullptr};
  Linear fc1{nullptr}, fc2{nullptr};  // mlp.fc1, mlp.fc2 (GELU(tanh) between)
  Linear adaLN{nullptr};              // adaLN_modulation.1 (adaLN_modulation.0 is the SiLU)
  torch::nn::ModuleList adaLN_modulation{nullptr};

 private:
  bool preOnly_;
};
TORCH_MODULE(Sd3StreamBlock);

// MMDiTBlock: context_block and x_block attend jointly over [context, x]; returns the new context
// (undefined after the last block, whose context block is pre_only) and x.
class Sd3JointBlockImpl : public torch::nn::Module {
 public:
  Sd3JointBlockImpl(const Sd3MmditConfig& config, bool last, bool selfAttention2);
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& context, const torch::Tensor& x, const torch::Tensor& c);
  Sd3StreamBlock context_block{nullptr}, x_block{nullptr};
};
TORCH_MODULE(Sd3JointBlock);

}  // namespace sinter::models

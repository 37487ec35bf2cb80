#include "models/sd3/sd3_mmdit_block.h"

#include "models/layers/attention.h"

namespace sinter::models {

torch::Tensor sd3LayerNorm(const torch::Tensor& x) { return torch::layer_norm(x, {x.size(-1)}, {}, {}, 1e-6); }

torch::Tensor sd3Modulate(const torch::Tensor& x, const torch::Tensor& shift, const torch::Tensor& scale) {
  return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1);
}

Sd3RmsNormImpl::Sd3RmsNormImpl(int64_t dim) { weight = register_parameter("weight", torch::ones({dim})); }

torch::Tensor Sd3RmsNormImpl::forward(const torch::Tensor& x) {
  return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + 1e-6) * weight.to(x.dtype());
}

Sd3AttentionImpl::Sd3AttentionImpl(int64_t hidden, int64_t heads, bool qkNormRms, bool preOnly) : heads_(heads) {
  qkv = register_module("qkv", Linear(hidden, 3 * hidden));
  if (!preOnly) proj = register_module("proj", Linear(hidden, hidden));
  if (qkNormRms) {
    ln_q = register_module("ln_q", Sd3RmsNorm(hidden / heads));
    ln_k = register_module("ln_k", Sd3RmsNorm(hidden / heads));
  }
}

Sd3Qkv Sd3AttentionImpl::qkv_heads(const torch::Tensor& x) {
  const int64_t b = x.size(0), l = x.size(1);
  // qkv.reshape(B, L, -1, head_dim).chunk(3, dim=2): q is the first `heads` groups, then k, then v.
  const std::vector<torch::Tensor> parts = qkv(x).view({b, l, 3 * heads_, -1}).chunk(3, 2);
  torch::Tensor q = parts[0], k = parts[1];
  if (ln_q) {
    q = ln_q(q);
    k = ln_k(k);
  }
  return {q.transpose(1, 2), k.transpose(1, 2), parts[2].transpose(1, 2)};
}

torch::Tensor sd3Attention(const Sd3Qkv& qkv) {
  const torch::Tensor out = scaledDotProductAttention(qkv.q, qkv.k, qkv.v);  // [B, heads, L, d]
  return out.transpose(1, 2).flatten(2);
}

Sd3StreamBlockImpl::Sd3StreamBlockImpl(const Sd3MmditConfig& c, bool preOnly, bool selfAttention2) : preOnly_(preOnly) {
  const int64_t hidden = c.hiddenSize();
  attn = register_module("attn", Sd3Attention(hidden, c.numHeads(), c.qkNormRms, preOnly));
  // attn2 has the main attention's heads, as SAI's mmditx.py and ComfyUI; sd-scripts splits it as 64 heads of 24
  // (its attention() reads the head count as head_dim; tests/gpu/RESULTS.md, SD 3.x).
  if (selfAttention2) attn2 = register_module("attn2", Sd3Attention(hidden, c.numHeads(), c.qkNormRms, false));
  if (!preOnly) {
    auto mlp = register_module("mlp", std::make_shared<torch::nn::Module>());
    fc1 = mlp->register_module("fc1", Linear(hidden, c.mlpHiddenSize()));
    fc2 = mlp->register_module("fc2", Linear(c.mlpHiddenSize(), hidden));
  }
  const int64_t mods = selfAttention2 ? 9 : preOnly ? 2 : 6;
  adaLN = Linear(hidden, mods * hidden);
  adaLN_modulation = register_module("adaLN_modulation", torch::nn::ModuleList(torch::nn::SiLU(), adaLN));
}

std::vector<torch::Tensor> Sd3StreamBlockImpl::modulation(const torch::Tensor& c) {
  return adaLN(torch::silu(c)).chunk(adaLN->outFeatures() / c.size(-1), -1);
}

Sd3Qkv Sd3StreamBlockImpl::preAttention(const torch::Tensor& normed, const std::vector<torch::Tensor>& mod) {
  return attn->qkv_heads(sd3Modulate(normed, mod[0], mod[1]));
}

Sd3Qkv Sd3StreamBlockImpl::preAttention2(const torch::Tensor& normed, const std::vector<torch::Tensor>& mod) {
  return attn2->qkv_heads(sd3Modulate(normed, mod[6], mod[7]));
}

torch::Tensor Sd3StreamBlockImpl::postAttention(const torch::Tensor& x, const torch::Tensor& attended,
                                                const std::vector<torch::Tensor>& mod, const torch::Tensor& attended2) {
  torch::Tensor out = x + mod[2].unsqueeze(1) * attn->proj(attended);
  if (attn2) out = out + mod[8].unsqueeze(1) * attn2->proj(attended2);
  const torch::Tensor h = fc1(sd3Modulate(sd3LayerNorm(out), mod[3], mod[4]));
  return out + mod[5].unsqueeze(1) * fc2(torch::gelu(h, "tanh"));
}

Sd3JointBlockImpl::Sd3JointBlockImpl(const Sd3MmditConfig& c, bool last, bool selfAttention2) {
  context_block = register_module("context_block", Sd3StreamBlock(c, /*preOnly=*/last, false));
  x_block = register_module("x_block", Sd3StreamBlock(c, false, selfAttention2));
}

std::pair<torch::Tensor, torch::Tensor> Sd3JointBlockImpl::forward(const torch::Tensor& context, const torch::Tensor& x,
                                                                   const torch::Tensor& c) {
  const std::vector<torch::Tensor> ctxMod = context_block->modulation(c), xMod = x_block->modulation(c);
  const torch::Tensor xNormed = sd3LayerNorm(x);
  const Sd3Qkv ctxQkv = context_block->preAttention(sd3LayerNorm(context), ctxMod), xQkv = x_block->preAttention(xNormed, xMod);
  const Sd3Qkv joint{torch::cat({ctxQkv.q, xQkv.q}, 2), torch::cat({ctxQkv.k, xQkv.k}, 2), torch::cat({ctxQkv.v, xQkv.v}, 2)};
  const std::vector<torch::Tensor> attended = sd3Attention(joint).split_with_sizes({context.size(1), x.size(1)}, 1);
  const torch::Tensor attended2 = x_block->hasAttention2() ? sd3Attention(x_block->preAttention2(xNormed, xMod)) : torch::Tensor();
  const torch::Tensor xOut = x_block->postAttention(x, attended[1], xMod, attended2);
  const torch::Tensor ctxOut = context_block->preOnly() ? torch::Tensor() : context_block->postAttention(context, attended[0], ctxMod);
  return {ctxOut, xOut};
}

}  // namespace sinter::models

// The FLUX.1 and Chroma transformers at a tiny size: their key names and counts, and their forward
// passes against a straightforward re-computation of BFL's formulas (and sd-scripts' Chroma, per
// sample) written here with plain tensor operations.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "kernels/fused_kernels.h"
#include "models/flux/flux_latents.h"
#include "models/flux/flux_rope.h"
#include "models/flux/flux_transformer.h"

using namespace sinter::models;
using torch::Tensor;

namespace {

// ---- The reference: BFL's math, spelled out ------------------------------------------------

Tensor lin(const Tensor& x, const Tensor& w, const Tensor& b) { return torch::matmul(x, w.t()) + b; }
Tensor refSilu(const Tensor& x) { return x / (1 + torch::exp(-x)); }
Tensor layerNorm(const Tensor& x) {
  const Tensor mean = x.mean(-1, true);
  const Tensor var = (x - mean).pow(2).mean(-1, true);
  return (x - mean) / torch::sqrt(var + 1e-6);
}
Tensor rms(const Tensor& x, const Tensor& scale) { return x / torch::sqrt(x.pow(2).mean(-1, true) + 1e-6) * scale; }
Tensor refGelu(const Tensor& x) { return 0.5 * x * (1 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x.pow(3)))); }
Tensor heads(const Tensor& x, int64_t h) { return x.view({x.size(0), x.size(1), h, -1}).transpose(1, 2); }
Tensor mergeHeads(const Tensor& x) { return x.transpose(1, 2).reshape({x.size(0), x.size(2), -1}); }

// Angle of every channel pair: axis a's pair i turns by pos_a * theta^(-2i / d_a). [B, L, D/2]
Tensor pairAngles(const Tensor& ids, const std::vector<int64_t>& axes, double theta) {
  std::vector<Tensor> cols;
  for (size_t a = 0; a < axes.size(); ++a)
    for (int64_t i = 0; i < axes[a] / 2; ++i)
      cols.push_back(ids.select(2, a).to(torch::kFloat64) * std::pow(theta, -2.0 * i / axes[a]));
  return torch::stack(cols, -1);
}

// (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos) for each pair (2i, 2i+1).
Tensor rope(const Tensor& x, const Tensor& angles) {
  const Tensor c = torch::cos(angles).unsqueeze(1).to(torch::kFloat32), s = torch::sin(angles).unsqueeze(1).to(torch::kFloat32);
  const Tensor x0 = x.slice(-1, 0, x.size(-1), 2), x1 = x.slice(-1, 1, x.size(-1), 2);
  return torch::stack({x0 * c - x1 * s, x0 * s + x1 * c}, -1).flatten(-2);
}

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  return torch::matmul(torch::softmax(torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(double(q.size(-1))), -1), v);
}

struct Weights {
  std::map<std::string, Tensor> byName;
  Tensor operator()(const std::string& name) const { return byName.at(name); }
};

Weights weightsOf(const torch::nn::Module& m) {
  Weights w;
  for (const auto& item : m.named_parameters(true)) w.byName[item.key()] = item.value().detach();
  return w;
}

// [shift, scale, gate, ...] chunks of lin(refSilu(vec)), each [B, 1, H]
std::vector<Tensor> modulation(const Weights& w, const std::string& name, const Tensor& vec) {
  return lin(refSilu(vec), w(name + ".weight"), w(name + ".bias")).unsqueeze(1).chunk(w(name + ".bias").size(0) / vec.size(1), -1);
}

struct Qkv {
  Tensor q, k, v;
};

Qkv qkvOf(const Weights& w, const std::string& prefix, const std::string& normPrefix, const Tensor& x, int64_t nHeads) {
  const Tensor qkv = lin(x, w(prefix + "weight"), w(prefix + "bias"));
  const int64_t h = qkv.size(-1) / 3;
  return {rms(heads(qkv.slice(-1, 0, h), nHeads), w(normPrefix + "query_norm.scale")),
          rms(heads(qkv.slice(-1, h, 2 * h), nHeads), w(normPrefix + "key_norm.scale")),
          heads(qkv.slice(-1, 2 * h, 3 * h), nHeads)};
}

// A double block given its streams' modulations im, tm ([shift, scale, gate] for attention, then for the MLP).
std::pair<Tensor, Tensor> referenceDoubleBlock(const Weights& w, const std::string& p, Tensor img, Tensor txt,
                                               const std::vector<Tensor>& im, const std::vector<Tensor>& tm,
                                               const Tensor& angles, int64_t nHeads) {
  const Qkv i = qkvOf(w, p + "img_attn.qkv.", p + "img_attn.norm.", (1 + im[1]) * layerNorm(img) + im[0], nHeads);
  const Qkv t = qkvOf(w, p + "txt_attn.qkv.", p + "txt_attn.norm.", (1 + tm[1]) * layerNorm(txt) + tm[0], nHeads);
  const Tensor a = mergeHeads(attention(rope(torch::cat({t.q, i.q}, 2), angles), rope(torch::cat({t.k, i.k}, 2), angles),
                                        torch::cat({t.v, i.v}, 2)));
  const int64_t T = txt.size(1);
  auto mlp = [&](const std::string& m, const Tensor& x) {
    return lin(refGelu(lin(x, w(m + "0.weight"), w(m + "0.bias"))), w(m + "2.weight"), w(m + "2.bias"));
  };
  img = img + im[2] * lin(a.slice(1, T), w(p + "img_attn.proj.weight"), w(p + "img_attn.proj.bias"));
  img = img + im[5] * mlp(p + "img_mlp.", (1 + im[4]) * layerNorm(img) + im[3]);
  txt = txt + tm[2] * lin(a.slice(1, 0, T), w(p + "txt_attn.proj.weight"), w(p + "txt_attn.proj.bias"));
  txt = txt + tm[5] * mlp(p + "txt_mlp.", (1 + tm[4]) * layerNorm(txt) + tm[3]);
  return {img, txt};
}

std::pair<Tensor, Tensor> referenceDoubleBlock(const Weights& w, const std::string& p, const Tensor& img, const Tensor& txt,
                                               const Tensor& vec, const Tensor& angles, int64_t nHeads) {
  return referenceDoubleBlock(w, p, img, txt, modulation(w, p + "img_mod.lin", vec), modulation(w, p + "txt_mod.lin", vec), angles, nHeads);
}

Tensor referenceSingleBlock(const Weights& w, const std::string& p, const Tensor& x, const std::vector<Tensor>& m,
                            const Tensor& angles, int64_t nHeads) {
  const Tensor h = lin((1 + m[1]) * layerNorm(x) + m[0], w(p + "linear1.weight"), w(p + "linear1.bias"));
  const int64_t hidden = x.size(-1);
  const Tensor qkv = h.slice(-1, 0, 3 * hidden), mlpIn = h.slice(-1, 3 * hidden);
  const Tensor q = rms(heads(qkv.slice(-1, 0, hidden), nHeads), w(p + "norm.query_norm.scale"));
  const Tensor k = rms(heads(qkv.slice(-1, hidden, 2 * hidden), nHeads), w(p + "norm.key_norm.scale"));
  const Tensor v = heads(qkv.slice(-1, 2 * hidden), nHeads);
  const Tensor a = mergeHeads(attention(rope(q, angles), rope(k, angles), v));
  return x + m[2] * lin(torch::cat({a, refGelu(mlpIn)}, -1), w(p + "linear2.weight"), w(p + "linear2.bias"));
}

Tensor referenceSingleBlock(const Weights& w, const std::string& p, const Tensor& x, const Tensor& vec,
                            const Tensor& angles, int64_t nHeads) {
  return referenceSingleBlock(w, p, x, modulation(w, p + "modulation.lin", vec), angles, nHeads);
}

// [cos(1000 t f), sin(1000 t f)], f_i = 10000^(-i/half), i < half = dim / 2
Tensor timeEmbedding(const Tensor& t, int64_t dim = 256) {
  const int64_t half = dim / 2;
  const Tensor f = torch::exp(-std::log(10000.0) * torch::arange(half, torch::kFloat32) / double(half));
  const Tensor args = (t * 1000).unsqueeze(1) * f;
  return torch::cat({torch::cos(args), torch::sin(args)}, 1);
}

Tensor mlpEmbedder(const Weights& w, const std::string& p, const Tensor& x) {
  return lin(refSilu(lin(x, w(p + "in_layer.weight"), w(p + "in_layer.bias"))), w(p + "out_layer.weight"), w(p + "out_layer.bias"));
}

Tensor referenceForward(const FluxTransformer& model, const Tensor& img, const Tensor& imgIds, const Tensor& txt,
                        const Tensor& txtIds, const Tensor& t, const Tensor& y, const Tensor& guidance) {
  const FluxConfig& c = model->config();
  const Weights w = weightsOf(*model);
  Tensor vec = mlpEmbedder(w, "time_in.", timeEmbedding(t)) + mlpEmbedder(w, "vector_in.", y);
  if (c.guidanceEmbed) vec = vec + mlpEmbedder(w, "guidance_in.", timeEmbedding(guidance));
  Tensor i = lin(img, w("img_in.weight"), w("img_in.bias")), x = lin(txt, w("txt_in.weight"), w("txt_in.bias"));
  const Tensor angles = pairAngles(torch::cat({txtIds, imgIds}, 1), c.axesDim, c.theta);
  for (int64_t b = 0; b < c.depth; ++b)
    std::tie(i, x) = referenceDoubleBlock(w, "double_blocks." + std::to_string(b) + ".", i, x, vec, angles, c.numHeads);
  Tensor joint = torch::cat({x, i}, 1);
  for (int64_t b = 0; b < c.depthSingleBlocks; ++b)
    joint = referenceSingleBlock(w, "single_blocks." + std::to_string(b) + ".", joint, vec, angles, c.numHeads);
  const auto shiftScale = lin(refSilu(vec), w("final_layer.adaLN_modulation.1.weight"), w("final_layer.adaLN_modulation.1.bias")).chunk(2, 1);
  const Tensor out = (1 + shiftScale[1].unsqueeze(1)) * layerNorm(joint.slice(1, txt.size(1))) + shiftScale[0].unsqueeze(1);
  return lin(out, w("final_layer.linear.weight"), w("final_layer.linear.bias"));
}

// ---- Chroma (sd-scripts' chroma_models.Chroma), spelled out per sample as it computes: the text
// cut to its real tokens and one padding token (txt_seq_len), so no mask at all.

// Rows [start, start + n) of the approximator's output, each [1, 1, H]: shift, scale, gate, ...
std::vector<Tensor> rowsOf(const Tensor& vectors, int64_t start, int64_t n) {
  std::vector<Tensor> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(vectors.slice(1, start + i, start + i + 1));
  return out;
}

// get_mod_vectors: [timestep (in/4), guidance (in/4), index (in/2)] embeddings through the Approximator.
Tensor chromaVectors(const Weights& w, const FluxConfig& c, const Tensor& t, const Tensor& g) {
  const int64_t in = c.approximatorInDim, count = 3 * c.depthSingleBlocks + 12 * c.depth + 2, b = t.size(0);
  const Tensor index = timeEmbedding(torch::arange(count, torch::kFloat32), in / 2);
  const Tensor tg = torch::cat({timeEmbedding(t, in / 4), timeEmbedding(g, in / 4)}, 1);
  const Tensor input = torch::cat({tg.unsqueeze(1).expand({b, count, in / 2}), index.unsqueeze(0).expand({b, count, in / 2})}, 2);
  const std::string a = "distilled_guidance_layer.";
  Tensor x = lin(input, w(a + "in_proj.weight"), w(a + "in_proj.bias"));
  for (int64_t i = 0; i < c.approximatorDepth; ++i)
    x = x + mlpEmbedder(w, a + "layers." + std::to_string(i) + ".", rms(x, w(a + "norms." + std::to_string(i) + ".scale")));
  return lin(x, w(a + "out_proj.weight"), w(a + "out_proj.bias"));
}

Tensor referenceChromaForward(const FluxTransformer& model, const Tensor& img, const Tensor& imgIds, const Tensor& txt,
                              const Tensor& txtIds, const Tensor& t, const Tensor& guidance, const Tensor& mask) {
  const FluxConfig& c = model->config();
  const Weights w = weightsOf(*model);
  const Tensor vectors = chromaVectors(w, c, t, guidance);
  const int64_t singles = c.depthSingleBlocks, doubles = c.depth;
  std::vector<Tensor> out;
  for (int64_t s = 0; s < img.size(0); ++s) {
    const int64_t len = std::min<int64_t>(mask[s].sum().item<int64_t>() + 1, txt.size(1));  // attn_padding = 1
    const Tensor v = vectors.slice(0, s, s + 1);
    Tensor i = lin(img.slice(0, s, s + 1), w("img_in.weight"), w("img_in.bias"));
    Tensor x = lin(txt.slice(0, s, s + 1).slice(1, 0, len), w("txt_in.weight"), w("txt_in.bias"));
    const Tensor angles = pairAngles(torch::cat({txtIds.slice(0, s, s + 1).slice(1, 0, len), imgIds.slice(0, s, s + 1)}, 1), c.axesDim, c.theta);
    for (int64_t b = 0; b < doubles; ++b)
      std::tie(i, x) = referenceDoubleBlock(w, "double_blocks." + std::to_string(b) + ".", i, x, rowsOf(v, 3 * singles + 6 * b, 6),
                                            rowsOf(v, 3 * singles + 6 * doubles + 6 * b, 6), angles, c.numHeads);
    Tensor joint = torch::cat({x, i}, 1);
    for (int64_t b = 0; b < singles; ++b)
      joint = referenceSingleBlock(w, "single_blocks." + std::to_string(b) + ".", joint, rowsOf(v, 3 * b, 3), angles, c.numHeads);
    const std::vector<Tensor> last = rowsOf(v, 3 * singles + 12 * doubles, 2);  // shift, scale
    out.push_back(lin((1 + last[1]) * layerNorm(joint.slice(1, len)) + last[0], w("final_layer.linear.weight"), w("final_layer.linear.bias")));
  }
  return torch::cat(out, 0);
}

// Random weights everywhere, the RMSNorm scales too (their initial ones would hide a misuse).
FluxTransformer randomTiny(bool dev = true, bool chroma = false) {
  torch::manual_seed(3);
  FluxTransformer model(chroma ? FluxConfig::tinyChroma() : FluxConfig::tiny(dev));
  torch::NoGradGuard noGrad;
  for (auto& p : model->parameters()) p.copy_(torch::randn_like(p) * 0.3 + (p.dim() == 1 && p.size(0) == 32 ? 1.0 : 0.0));
  return model;
}

struct Inputs {
  Tensor img, imgIds, txt, txtIds, t, y, guidance;
};

Inputs tinyInputs(const FluxConfig& c, int64_t batch = 2) {
  torch::manual_seed(11);
  Inputs in;
  in.img = packFluxLatents(torch::randn({batch, 16, 4, 6}));  // 2 x 3 tokens
  in.imgIds = fluxImageIds(batch, 2, 3);
  in.txt = torch::randn({batch, 5, c.contextInDim});
  in.txtIds = fluxTextIds(batch, 5);
  in.t = torch::tensor({0.9f, 0.05f}).slice(0, 0, batch);
  in.y = torch::randn({batch, c.vecInDim});
  in.guidance = torch::tensor({3.5f, 1.0f}).slice(0, 0, batch);
  return in;
}

Tensor run(FluxTransformer& m, const Inputs& in) { return m(in.img, in.imgIds, in.txt, in.txtIds, in.t, in.y, in.guidance); }

}  // namespace

// The released files: 20 keys outside the blocks for dev (img_in, txt_in: 2 each; time_in,
// vector_in, guidance_in: 4 each; final_layer: 4), 16 for schnell (no guidance_in); 24 per
// double block (per stream: mod.lin 2, attn.qkv 2, attn.norm 2, attn.proj 2, mlp.0 2, mlp.2 2) and
// 8 per single block (linear1 2, linear2 2, norm 2, modulation.lin 2). dev: 20 + 19*24 + 38*8 = 780;
// schnell: 776. The key list depends on depth and variant only, so it is counted at full depth and
// tiny width (the full width's 12B parameters do not fit a CPU test).
TEST(FluxTransformer, KeysOfTheReleasedFiles) {
  for (bool dev : {true, false}) {
    FluxConfig c = FluxConfig::tiny(dev);
    c.depth = FluxConfig::dev().depth;
    c.depthSingleBlocks = FluxConfig::dev().depthSingleBlocks;
    ASSERT_EQ(c.depth, 19);
    ASSERT_EQ(c.depthSingleBlocks, 38);
    FluxTransformer model(c);
    std::set<std::string> keys;
    for (const auto& [key, t] : model->checkpointTensors()) keys.insert(key);
    EXPECT_EQ(keys.size(), dev ? 780u : 776u);
    EXPECT_EQ(model->blockRegions().size(), 57u);
    EXPECT_EQ(keys.count("guidance_in.in_layer.weight"), dev ? 1u : 0u);
    for (const char* key :
         {"img_in.weight", "img_in.bias", "txt_in.weight", "time_in.in_layer.weight", "time_in.out_layer.bias",
          "vector_in.in_layer.weight", "vector_in.out_layer.bias", "final_layer.adaLN_modulation.1.weight",
          "final_layer.adaLN_modulation.1.bias", "final_layer.linear.weight", "final_layer.linear.bias",
          "double_blocks.18.img_mod.lin.weight", "double_blocks.18.img_attn.qkv.bias",
          "double_blocks.18.img_attn.norm.query_norm.scale", "double_blocks.18.img_attn.norm.key_norm.scale",
          "double_blocks.18.img_attn.proj.weight", "double_blocks.18.img_mlp.0.weight", "double_blocks.18.img_mlp.2.bias",
          "double_blocks.0.txt_mod.lin.bias", "double_blocks.0.txt_attn.qkv.weight",
          "double_blocks.0.txt_attn.norm.key_norm.scale", "double_blocks.0.txt_attn.proj.bias",
          "double_blocks.0.txt_mlp.0.bias", "double_blocks.0.txt_mlp.2.weight", "single_blocks.37.linear1.weight",
          "single_blocks.37.linear1.bias", "single_blocks.37.linear2.weight", "single_blocks.37.norm.query_norm.scale",
          "single_blocks.37.norm.key_norm.scale", "single_blocks.37.modulation.lin.bias"})
      EXPECT_TRUE(keys.count(key)) << key;
    EXPECT_FALSE(keys.count("double_blocks.19.img_mod.lin.weight"));
    EXPECT_FALSE(keys.count("single_blocks.38.linear1.weight"));
  }
}

TEST(FluxTransformer, ShapesFollowTheConfig) {
  const FluxConfig c = FluxConfig::tiny();
  FluxTransformer model(c);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [key, t] : model->checkpointTensors()) shapes[key] = t.sizes().vec();
  const int64_t h = c.hiddenSize, mlp = c.mlpHiddenDim();
  EXPECT_EQ(shapes["img_in.weight"], (std::vector<int64_t>{h, 64}));
  EXPECT_EQ(shapes["txt_in.weight"], (std::vector<int64_t>{h, c.contextInDim}));
  EXPECT_EQ(shapes["time_in.in_layer.weight"], (std::vector<int64_t>{h, 256}));
  EXPECT_EQ(shapes["vector_in.in_layer.weight"], (std::vector<int64_t>{h, c.vecInDim}));
  EXPECT_EQ(shapes["double_blocks.0.img_mod.lin.weight"], (std::vector<int64_t>{6 * h, h}));
  EXPECT_EQ(shapes["double_blocks.0.img_attn.qkv.weight"], (std::vector<int64_t>{3 * h, h}));
  EXPECT_EQ(shapes["double_blocks.0.img_attn.norm.query_norm.scale"], (std::vector<int64_t>{c.headDim()}));
  EXPECT_EQ(shapes["double_blocks.0.img_mlp.0.weight"], (std::vector<int64_t>{mlp, h}));
  EXPECT_EQ(shapes["single_blocks.0.linear1.weight"], (std::vector<int64_t>{3 * h + mlp, h}));
  EXPECT_EQ(shapes["single_blocks.0.linear2.weight"], (std::vector<int64_t>{h, h + mlp}));
  EXPECT_EQ(shapes["single_blocks.0.modulation.lin.weight"], (std::vector<int64_t>{3 * h, h}));
  EXPECT_EQ(shapes["final_layer.adaLN_modulation.1.weight"], (std::vector<int64_t>{2 * h, h}));
  EXPECT_EQ(shapes["final_layer.linear.weight"], (std::vector<int64_t>{64, h}));
}

// LoRA attaches to models::Linear by module name: every Linear carries its checkpoint name.
TEST(FluxTransformer, EveryProjectionIsALinearUnderItsCheckpointName) {
  FluxTransformer model(FluxConfig::tiny());
  std::set<std::string> linears;
  for (const auto& item : model->named_modules())
    if (std::dynamic_pointer_cast<LinearImpl>(item.value())) linears.insert(item.key());
  for (const char* name : {"img_in", "txt_in", "time_in.in_layer", "guidance_in.out_layer", "double_blocks.1.img_attn.qkv",
                           "double_blocks.1.txt_attn.proj", "double_blocks.0.img_mlp.0", "double_blocks.0.txt_mlp.2",
                           "double_blocks.0.img_mod.lin", "single_blocks.1.linear1", "single_blocks.1.linear2",
                           "single_blocks.0.modulation.lin", "final_layer.linear", "final_layer.adaLN_modulation.1"})
    EXPECT_TRUE(linears.count(name)) << name;
  // img_in, txt_in; time_in, vector_in, guidance_in: 2 each; final_layer: 2; per double block 5 per
  // stream (mod.lin, attn.qkv, attn.proj, mlp.0, mlp.2); per single block 3 (linear1, linear2, modulation.lin)
  EXPECT_EQ(linears.size(), 2u + 6u + 2u + 2 * 10u + 2 * 3u);
}

TEST(FluxTransformer, DoubleBlockMatchesTheFormulas) {
  FluxTransformer model = randomTiny();
  const FluxConfig& c = model->config();
  torch::manual_seed(5);
  const Tensor img = torch::randn({2, 6, c.hiddenSize}), txt = torch::randn({2, 5, c.hiddenSize});
  const Tensor vec = torch::randn({2, c.hiddenSize});
  const Tensor ids = torch::cat({fluxTextIds(2, 5), fluxImageIds(2, 2, 3)}, 1);
  torch::NoGradGuard noGrad;
  const Tensor rotations = fluxRopeRotations(ids, c.axesDim, c.theta);
  FluxDoubleBlock block = model->double_blocks->ptr<FluxDoubleBlockImpl>(1);
  const auto [imgOut, txtOut] = block(img, txt, vec, rotations);
  const auto [imgRef, txtRef] =
      referenceDoubleBlock(weightsOf(*block), "", img, txt, vec, pairAngles(ids, c.axesDim, c.theta), c.numHeads);
  EXPECT_TRUE(torch::allclose(imgOut, imgRef, 1e-4, 1e-5)) << (imgOut - imgRef).abs().max().item<float>();
  EXPECT_TRUE(torch::allclose(txtOut, txtRef, 1e-4, 1e-5)) << (txtOut - txtRef).abs().max().item<float>();
  EXPECT_GT((imgOut - img).abs().max().item<float>(), 1e-2);  // the block did something
}

TEST(FluxTransformer, SingleBlockMatchesTheFormulas) {
  FluxTransformer model = randomTiny();
  const FluxConfig& c = model->config();
  torch::manual_seed(6);
  const Tensor x = torch::randn({2, 11, c.hiddenSize}), vec = torch::randn({2, c.hiddenSize});
  const Tensor ids = torch::cat({fluxTextIds(2, 5), fluxImageIds(2, 2, 3)}, 1);
  torch::NoGradGuard noGrad;
  FluxSingleBlock block = model->single_blocks->ptr<FluxSingleBlockImpl>(0);
  const Tensor out = block(x, vec, fluxRopeRotations(ids, c.axesDim, c.theta));
  const Tensor ref = referenceSingleBlock(weightsOf(*block), "", x, vec, pairAngles(ids, c.axesDim, c.theta), c.numHeads);
  EXPECT_TRUE(torch::allclose(out, ref, 1e-4, 1e-5)) << (out - ref).abs().max().item<float>();
}

TEST(FluxTransformer, ForwardMatchesTheFormulas) {
  for (bool dev : {true, false}) {
    FluxTransformer model = randomTiny(dev);
    const Inputs in = tinyInputs(model->config());
    torch::NoGradGuard noGrad;
    const Tensor out = run(model, in);
    ASSERT_EQ(out.sizes(), in.img.sizes());
    const Tensor ref = referenceForward(model, in.img, in.imgIds, in.txt, in.txtIds, in.t, in.y, in.guidance);
    // The reference sums in another order: compared by norm, as float32 rounding allows.
    const double relative = ((out - ref).norm() / ref.norm()).item<double>();
    EXPECT_LT(relative, 2e-6) << (dev ? "dev " : "schnell ") << relative << ", max " << (out - ref).abs().max().item<float>()
                              << " of " << ref.abs().max().item<float>();
  }
}

TEST(FluxTransformer, GuidanceSteersDevOnly) {
  FluxTransformer dev = randomTiny(true), schnell = randomTiny(false);
  Inputs in = tinyInputs(dev->config());
  torch::NoGradGuard noGrad;
  const Tensor a = run(dev, in), sa = run(schnell, in);
  in.guidance = torch::tensor({1.0f, 7.0f});
  EXPECT_FALSE(torch::allclose(a, run(dev, in)));
  EXPECT_TRUE(torch::equal(sa, run(schnell, in)));
  in.guidance = Tensor();
  EXPECT_THROW(run(dev, in), std::invalid_argument);
  EXPECT_TRUE(torch::equal(sa, run(schnell, in)));
}

TEST(FluxTransformer, RejectsMisshapenInputs) {
  FluxTransformer model(FluxConfig::tiny());
  Inputs in = tinyInputs(model->config());
  torch::NoGradGuard noGrad;
  Inputs bad = in;
  bad.img = torch::randn({2, 6, 63});
  EXPECT_THROW(run(model, bad), std::invalid_argument);
  bad = in;
  bad.txt = torch::randn({2, 5, 7});
  EXPECT_THROW(run(model, bad), std::invalid_argument);
  bad = in;
  bad.imgIds = fluxImageIds(2, 3, 3);
  EXPECT_THROW(run(model, bad), std::invalid_argument);
  bad = in;
  bad.y = torch::randn({2, 3});
  EXPECT_THROW(run(model, bad), std::invalid_argument);
}

// sd-scripts' apply_t5_attn_mask: masked text tokens are keys nobody attends to, so what they hold
// changes nothing in the image tokens' output.
TEST(FluxTransformer, TextMaskHidesPaddingTokens) {
  FluxTransformer model = randomTiny();
  Inputs in = tinyInputs(model->config());
  const Tensor mask = torch::tensor({1, 1, 1, 0, 0}).repeat({2, 1});
  torch::NoGradGuard noGrad;
  const Tensor a = model(in.img, in.imgIds, in.txt, in.txtIds, in.t, in.y, in.guidance, mask);
  Inputs other = in;
  other.txt = in.txt.clone();
  other.txt.slice(1, 3) += torch::randn_like(other.txt.slice(1, 3));
  const Tensor b = model(other.img, other.imgIds, other.txt, other.txtIds, other.t, other.y, other.guidance, mask);
  EXPECT_TRUE(torch::allclose(a, b, 1e-5, 1e-6));
  EXPECT_FALSE(torch::allclose(run(model, in), run(model, other), 1e-5, 1e-6));  // unmasked they matter
}

TEST(FluxTransformer, BlockRunnerSeesEveryRegionInOrder) {
  FluxTransformer model = randomTiny();
  const Inputs in = tinyInputs(model->config());
  torch::NoGradGuard noGrad;
  const Tensor expected = run(model, in);
  std::vector<std::string> seen;
  std::vector<size_t> inputCounts;
  model->setBlockRunner([&](const std::string& region, const std::vector<Tensor>& inputs,
                            const FluxTransformerImpl::BlockBody& body) {
    seen.push_back(region);
    inputCounts.push_back(inputs.size());
    return model->runBlockDefault(inputs, body);
  });
  EXPECT_TRUE(torch::equal(run(model, in), expected));
  EXPECT_EQ(seen, (std::vector<std::string>{"double_blocks.0", "double_blocks.1", "single_blocks.0", "single_blocks.1"}));
  EXPECT_EQ(seen, model->blockRegions());
  EXPECT_EQ(inputCounts, (std::vector<size_t>{4, 4, 3, 3}));
  model->setBlockRunner(nullptr);
}

TEST(FluxTransformer, GradientCheckpointingGivesTheSameGradients) {
  FluxTransformer model = randomTiny();
  model->train();
  const Inputs in = tinyInputs(model->config());
  auto gradients = [&](bool checkpointed) {
    model->setGradientCheckpointing(checkpointed, /*preserveRngState=*/false);
    model->zero_grad();
    const Tensor loss = run(model, in).pow(2).mean();
    loss.backward();
    std::vector<Tensor> grads;
    for (const auto& p : model->parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
    return std::make_pair(loss.item<double>(), grads);
  };
  const auto [plainLoss, plain] = gradients(false);
  const auto [ckptLoss, ckpt] = gradients(true);
  EXPECT_DOUBLE_EQ(plainLoss, ckptLoss);
  ASSERT_EQ(plain.size(), ckpt.size());
  for (size_t i = 0; i < plain.size(); ++i)   // the same math in another order of accumulation: equal to float32 rounding of the largest entry
    EXPECT_LE((plain[i] - ckpt[i]).abs().max().item<float>(), 1e-6 + 1e-6 * plain[i].abs().max().item<float>())
        << i << " " << (plain[i] - ckpt[i]).abs().max().item<float>() << " of " << plain[i].abs().max().item<float>();
  EXPECT_GT(plain.front().abs().sum().item<double>(), 0.0);
}

// The fused QK RMSNorm+RoPE kernel holds a head's row in a warp's registers, four channels per vector
// load: heads of other widths take the stock operators (FLUX's are 128, the tiny model's 32).
TEST(FluxTransformer, FusedQkKernelTakesHeadsOfAMultipleOfFourUpTo256) {
  for (int64_t d : {4, 32, 128, 256}) EXPECT_TRUE(sinter::kernels::qkNormRopeFits(d)) << d;
  for (int64_t d : {0, 2, 6, 130, 260, 512}) EXPECT_FALSE(sinter::kernels::qkNormRopeFits(d)) << d;
}

// The fused kernels (inductor) are CUDA kernels: asked for on the CPU, the blocks take the stock
// operators, so the forward pass and every gradient are bit for bit those of a model without them.
TEST(FluxTransformer, FusedKernelsOnTheCpuTrainLikeTheStockOperators) {
  auto forwardAndGrads = [](bool fused) {
    FluxTransformer model = randomTiny();
    model->setFusedKernels(fused);
    const Inputs in = tinyInputs(model->config());
    const Tensor out = run(model, in);
    out.pow(2).mean().backward();
    std::vector<Tensor> all{out.detach()};
    for (const Tensor& p : model->parameters())
      if (p.grad().defined()) all.push_back(p.grad());
    return all;
  };
  const std::vector<Tensor> stock = forwardAndGrads(false), fused = forwardAndGrads(true);
  ASSERT_EQ(stock.size(), fused.size());
  ASSERT_GT(stock.size(), 10u);
  for (size_t i = 0; i < stock.size(); ++i) EXPECT_TRUE(torch::equal(stock[i], fused[i])) << "tensor " << i;
}

// ---- Chroma ------------------------------------------------------------------------------------

// Chroma1-HD's keys: FLUX.1's without time_in, vector_in, guidance_in, the blocks' modulation Linears
// and final_layer.adaLN_modulation, with distilled_guidance_layer's: in_proj and out_proj (2 each),
// 5 x (layers.N.in_layer, .out_layer: 4; norms.N.scale: 1). 6 + 4 + 25 outside the blocks, 20 per
// double block, 6 per single block: 35 + 19 * 20 + 38 * 6 = 643.
TEST(ChromaTransformer, KeysOfAChromaFile) {
  FluxConfig c = FluxConfig::tinyChroma();
  c.depth = 19;
  c.depthSingleBlocks = 38;
  c.approximatorDepth = 5;
  FluxTransformer model(c);
  std::set<std::string> keys;
  for (const auto& [key, t] : model->checkpointTensors()) keys.insert(key);
  EXPECT_EQ(keys.size(), 643u);
  EXPECT_EQ(c.chromaModulationCount(), 344);  // mod_index_length
  for (const char* key : {"distilled_guidance_layer.in_proj.weight", "distilled_guidance_layer.out_proj.bias",
                          "distilled_guidance_layer.layers.4.out_layer.weight", "distilled_guidance_layer.norms.4.scale",
                          "double_blocks.18.img_attn.qkv.weight", "single_blocks.37.linear2.bias", "final_layer.linear.weight"})
    EXPECT_TRUE(keys.count(key)) << key;
  for (const char* key : {"time_in.in_layer.weight", "vector_in.in_layer.weight", "guidance_in.in_layer.weight",
                          "double_blocks.0.img_mod.lin.weight", "double_blocks.0.txt_mod.lin.weight",
                          "single_blocks.0.modulation.lin.weight", "final_layer.adaLN_modulation.1.weight"})
    EXPECT_FALSE(keys.count(key)) << key;
}

TEST(ChromaTransformer, ForwardMatchesSdScriptsPerSampleComputation) {
  FluxTransformer model = randomTiny(true, true);
  const Inputs in = tinyInputs(model->config());
  const Tensor mask = torch::tensor({1, 1, 1, 0, 0, 1, 1, 1, 1, 1}).view({2, 5});
  torch::NoGradGuard noGrad;
  const Tensor out = model(in.img, in.imgIds, in.txt, in.txtIds, in.t, Tensor(), in.guidance, mask);
  const Tensor ref = referenceChromaForward(model, in.img, in.imgIds, in.txt, in.txtIds, in.t, in.guidance, mask);
  ASSERT_EQ(out.sizes(), in.img.sizes());
  const double relative = ((out - ref).norm() / ref.norm()).item<double>();
  EXPECT_LT(relative, 2e-6) << relative;
}

// The first padding token after the caption is attended (attn_padding 1); the rest are not.
TEST(ChromaTransformer, SeesOnePaddingTokenAfterTheCaption) {
  FluxTransformer model = randomTiny(true, true);
  const Inputs in = tinyInputs(model->config());
  const Tensor mask = torch::tensor({1, 1, 0, 0, 0}).repeat({2, 1});
  torch::NoGradGuard noGrad;
  auto run = [&](const Tensor& txt) { return model(in.img, in.imgIds, txt, in.txtIds, in.t, Tensor(), in.guidance, mask); };
  const Tensor base = run(in.txt);
  Tensor later = in.txt.clone(), first = in.txt.clone();
  later.slice(1, 3) += torch::randn_like(later.slice(1, 3));
  first.slice(1, 2, 3) += torch::randn_like(first.slice(1, 2, 3));
  EXPECT_TRUE(torch::allclose(run(later), base, 1e-5, 1e-6));
  EXPECT_FALSE(torch::allclose(run(first), base, 1e-5, 1e-6));
}

// chroma_models' timestep_embedding(mod_index, 32) as it runs: t = 1000 * t (int64 -> float32), the
// frequencies exp(-log(10000) * arange(half) / half) in float32 on the CPU, args = t[:, None] * freqs,
// [cos, sin]. At index 343 the argument is ~3.4e5 radians, so a frequency rounded otherwise (exp on the
// GPU, as the embedding was made before) moves the sines: the GPU check found Chroma 1.8e-5 off so.
TEST(ChromaTransformer, IndexEmbeddingIsSdScriptsFloat32ComputationOnTheCpu) {
  FluxConfig c = FluxConfig::tinyChroma();
  c.depth = 19;
  c.depthSingleBlocks = 38;
  ChromaApproximator approximator(c);
  const int64_t half = c.approximatorInDim / 4;
  const Tensor t = 1000.0 * torch::arange(c.chromaModulationCount(), torch::kInt64);
  ASSERT_EQ(t.scalar_type(), torch::kFloat32);
  const Tensor freqs = torch::exp(-std::log(10000.0) * torch::arange(0, half, torch::kFloat32) / static_cast<double>(half));
  const Tensor args = t.unsqueeze(1) * freqs.unsqueeze(0);
  const Tensor expected = torch::cat({torch::cos(args), torch::sin(args)}, -1);
  ASSERT_EQ(approximator->indexEmbedding().sizes(), expected.sizes());
  EXPECT_TRUE(approximator->indexEmbedding().device().is_cpu());
  EXPECT_TRUE(torch::equal(approximator->indexEmbedding(), expected));
}

TEST(ChromaTransformer, NeedsTheTextMaskAndTheGuidance) {
  FluxTransformer model = randomTiny(true, true);
  const Inputs in = tinyInputs(model->config());
  const Tensor mask = torch::ones({2, 5}, torch::kLong);
  torch::NoGradGuard noGrad;
  EXPECT_THROW(model(in.img, in.imgIds, in.txt, in.txtIds, in.t, Tensor(), in.guidance), std::invalid_argument);
  EXPECT_THROW(model(in.img, in.imgIds, in.txt, in.txtIds, in.t, Tensor(), Tensor(), mask), std::invalid_argument);
  const Tensor a = model(in.img, in.imgIds, in.txt, in.txtIds, in.t, Tensor(), in.guidance, mask);
  EXPECT_FALSE(torch::allclose(a, model(in.img, in.imgIds, in.txt, in.txtIds, in.t, Tensor(), in.guidance * 2, mask)));
}

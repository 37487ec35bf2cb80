// SD 3 / 3.5's MMDiT: the keys of each model's file, the forward against sd-scripts' sd3_models.MMDiT
// written out from the file's tensors, the stored position table, and the shape read back from a file.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/sd3/sd3_mmdit.h"
#include "models/sd3/sd3_mmdit_layout.h"
#include "models/sd3/sd3_position_table.h"
#include "temp_dir.h"

using namespace sinter::models;
namespace io = sinter::io;
using torch::Tensor;

namespace {

Sd3Mmdit randomTiny(const Sd3MmditConfig& c = Sd3MmditConfig::tiny()) {
  torch::manual_seed(3);
  Sd3Mmdit model(c);
  torch::NoGradGuard noGrad;
  for (auto& p : model->parameters()) p.copy_(torch::randn_like(p) * 0.2 + (p.dim() == 1 && p.size(0) == 64 ? 1.0 : 0.0));
  return model;
}

using Weights = std::map<std::string, Tensor>;

Tensor linear(const Weights& w, const std::string& name, const Tensor& x) {
  return torch::matmul(x, w.at(name + ".weight").t()) + w.at(name + ".bias");
}

Tensor mlpEmbed(const Weights& w, const std::string& name, const Tensor& x) {
  return linear(w, name + ".mlp.2", torch::silu(linear(w, name + ".mlp.0", x)));
}

Tensor layerNorm(const Tensor& x) {
  const Tensor mean = x.mean(-1, true), var = (x - mean).pow(2).mean(-1, true);
  return (x - mean) / torch::sqrt(var + 1e-6);
}

Tensor modulate(const Tensor& x, const Tensor& shift, const Tensor& scale) { return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1); }

// AttentionLinears.pre_attention: [B, L, heads, 64] each.
std::vector<Tensor> qkvOf(const Weights& w, const std::string& attn, const Tensor& x, int64_t heads) {
  const Tensor qkv = linear(w, attn + ".qkv", x);
  const int64_t b = x.size(0), l = x.size(1), d = x.size(2) / heads;
  std::vector<Tensor> parts = qkv.reshape({b, l, 3 * heads, d}).chunk(3, 2);
  for (int i = 0; i < 2; ++i) {
    const std::string norm = attn + (i == 0 ? ".ln_q.weight" : ".ln_k.weight");
    if (w.count(norm)) parts[i] = parts[i] * torch::rsqrt(parts[i].pow(2).mean(-1, true) + 1e-6) * w.at(norm);
  }
  return parts;
}

// softmax(q kᵀ / √d) v per head, written out.
Tensor attention(const std::vector<Tensor>& qkv) {
  const Tensor q = qkv[0].transpose(1, 2), k = qkv[1].transpose(1, 2), v = qkv[2].transpose(1, 2);
  const Tensor scores = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(q.size(-1)));
  return torch::matmul(torch::softmax(scores, -1), v).transpose(1, 2).flatten(2);
}

// sd3_models.MMDiT.forward from the tensors of a file, centred crop.
Tensor referenceForward(const Sd3Mmdit& model, const Tensor& x, const Tensor& t, const Tensor& y, const Tensor& context) {
  Weights w;
  for (const auto& [key, tensor] : model->checkpointTensors("")) w[key] = tensor;
  const Sd3MmditConfig& c = model->config();
  const int64_t p = c.patchSize, b = x.size(0), H = x.size(2), W = x.size(3), h = H / p, wp = W / p, heads = c.numHeads();
  const int64_t hidden = c.hiddenSize(), max = c.posEmbedMaxSize;
  const int64_t top = (max - h) / 2, left = (max - wp) / 2;
  const Tensor pos = w.at("pos_embed").reshape({1, max, max, hidden}).slice(1, top, top + h).slice(2, left, left + wp).reshape({1, -1, hidden});
  Tensor tokens = torch::conv2d(x, w.at("x_embedder.proj.weight"), w.at("x_embedder.proj.bias"), p).flatten(2).transpose(1, 2) + pos;
  const int64_t half = 128;
  const Tensor freqs = torch::exp(-std::log(10000.0) * torch::arange(half, torch::kFloat32) / static_cast<double>(half));
  const Tensor args = t.unsqueeze(1).to(torch::kFloat32) * freqs.unsqueeze(0);
  const Tensor cvec = mlpEmbed(w, "t_embedder", torch::cat({torch::cos(args), torch::sin(args)}, -1)) + mlpEmbed(w, "y_embedder", y);
  Tensor ctx = linear(w, "context_embedder", context);
  for (int64_t i = 0; i < c.depth; ++i) {
    const std::string block = "joint_blocks." + std::to_string(i);
    const bool last = i == c.depth - 1, attn2 = c.xBlockSelfAttnLayers.count(i) > 0;
    const std::vector<Tensor> cm = linear(w, block + ".context_block.adaLN_modulation.1", torch::silu(cvec)).chunk(last ? 2 : 6, -1);
    const std::vector<Tensor> xm = linear(w, block + ".x_block.adaLN_modulation.1", torch::silu(cvec)).chunk(attn2 ? 9 : 6, -1);
    const std::vector<Tensor> cq = qkvOf(w, block + ".context_block.attn", modulate(layerNorm(ctx), cm[0], cm[1]), heads);
    const Tensor xNorm = layerNorm(tokens);
    const std::vector<Tensor> xq = qkvOf(w, block + ".x_block.attn", modulate(xNorm, xm[0], xm[1]), heads);
    std::vector<Tensor> joint;
    for (int j = 0; j < 3; ++j) joint.push_back(torch::cat({cq[j], xq[j]}, 1));
    const Tensor attended = attention(joint);
    const Tensor ctxAttended = attended.slice(1, 0, ctx.size(1)), xAttended = attended.slice(1, ctx.size(1));
    Tensor xOut = tokens + xm[2].unsqueeze(1) * linear(w, block + ".x_block.attn.proj", xAttended);
    if (attn2) {
      const Tensor a2 = attention(qkvOf(w, block + ".x_block.attn2", modulate(xNorm, xm[6], xm[7]), heads));
      xOut = xOut + xm[8].unsqueeze(1) * linear(w, block + ".x_block.attn2.proj", a2);
    }
    auto mlp = [&](const std::string& s, const Tensor& v) {
      return linear(w, s + ".mlp.fc2", torch::gelu(linear(w, s + ".mlp.fc1", v), "tanh"));
    };
    xOut = xOut + xm[5].unsqueeze(1) * mlp(block + ".x_block", modulate(layerNorm(xOut), xm[3], xm[4]));
    if (!last) {
      Tensor ctxOut = ctx + cm[2].unsqueeze(1) * linear(w, block + ".context_block.attn.proj", ctxAttended);
      ctx = ctxOut + cm[5].unsqueeze(1) * mlp(block + ".context_block", modulate(layerNorm(ctxOut), cm[3], cm[4]));
    }
    tokens = xOut;
  }
  const std::vector<Tensor> ss = linear(w, "final_layer.adaLN_modulation.1", torch::silu(cvec)).chunk(2, -1);
  const Tensor out = linear(w, "final_layer.linear", modulate(layerNorm(tokens), ss[0], ss[1]));
  const int64_t ch = c.inChannels;
  return out.view({b, h, wp, p, p, ch}).permute({0, 5, 1, 3, 2, 4}).reshape({b, ch, h * p, wp * p});
}


}  // namespace

// Each key of joint block i, as sd-scripts' MMDiT names them: qk norm from SD 3.5, attn2 in MMDiT-X's
// first 13 x blocks, the last context block pre_only (no proj, no MLP, 2 modulations).
TEST(Sd3Mmdit, KeysAndShapesFollowSdScriptsModel) {
  Sd3MmditConfig c = Sd3MmditConfig::tiny();
  c.depth = 3;
  c.xBlockSelfAttnLayers = {0, 1};
  Sd3Mmdit model(c);
  std::map<std::string, std::vector<int64_t>> keys;
  for (const auto& [key, t] : model->checkpointTensors("model.diffusion_model.")) keys[key] = t.sizes().vec();
  const std::string p = "model.diffusion_model.";
  const int64_t hidden = 192;
  EXPECT_EQ(keys.at(p + "x_embedder.proj.weight"), (std::vector<int64_t>{hidden, 16, 2, 2}));
  EXPECT_EQ(keys.at(p + "pos_embed"), (std::vector<int64_t>{1, 32 * 32, hidden}));
  EXPECT_EQ(keys.at(p + "t_embedder.mlp.0.weight"), (std::vector<int64_t>{hidden, 256}));
  EXPECT_EQ(keys.at(p + "y_embedder.mlp.2.weight"), (std::vector<int64_t>{hidden, hidden}));
  EXPECT_EQ(keys.at(p + "context_embedder.weight"), (std::vector<int64_t>{hidden, 32}));
  EXPECT_EQ(keys.at(p + "joint_blocks.0.x_block.adaLN_modulation.1.weight"), (std::vector<int64_t>{9 * hidden, hidden}));
  EXPECT_EQ(keys.at(p + "joint_blocks.2.x_block.adaLN_modulation.1.weight"), (std::vector<int64_t>{6 * hidden, hidden}));
  EXPECT_EQ(keys.at(p + "joint_blocks.2.context_block.adaLN_modulation.1.weight"), (std::vector<int64_t>{2 * hidden, hidden}));
  EXPECT_EQ(keys.at(p + "joint_blocks.1.x_block.attn2.qkv.weight"), (std::vector<int64_t>{3 * hidden, hidden}));
  EXPECT_EQ(keys.at(p + "joint_blocks.0.context_block.attn.ln_q.weight"), (std::vector<int64_t>{64}));
  EXPECT_EQ(keys.at(p + "joint_blocks.1.context_block.mlp.fc1.weight"), (std::vector<int64_t>{4 * hidden, hidden}));
  EXPECT_EQ(keys.at(p + "final_layer.linear.weight"), (std::vector<int64_t>{2 * 2 * 16, hidden}));
  EXPECT_EQ(keys.at(p + "final_layer.adaLN_modulation.1.bias"), (std::vector<int64_t>{2 * hidden}));
  for (const char* absent : {"joint_blocks.2.context_block.attn.proj.weight", "joint_blocks.2.context_block.mlp.fc1.weight",
                             "joint_blocks.2.x_block.attn2.qkv.weight", "joint_blocks.0.context_block.attn2.qkv.weight"})
    EXPECT_FALSE(keys.count(p + absent)) << absent;
  // Per block: x block 2 (adaLN) + 2 (qkv) + 2 (proj) + 2 (ln) + 4 (mlp) [+ 6 attn2]; context block
  // likewise without attn2, or 2 + 2 + 2 pre_only. Outside: proj 2, pos_embed, t 4, y 4, context 2, final 4.
  const size_t expected = 17 + (12 + 6 + 12) * 2 + 12 + 6;
  EXPECT_EQ(keys.size(), expected);
}

// The Linear listing from the config alone is the model's, in module order.
TEST(Sd3Mmdit, LinearLayoutIsTheModels) {
  Sd3MmditConfig c = Sd3MmditConfig::tiny();
  c.depth = 3;
  c.xBlockSelfAttnLayers = {0, 1};
  Sd3Mmdit model(c);
  std::vector<std::pair<std::string, std::vector<int64_t>>> linears;
  for (const auto& item : model->named_modules("", false))
    if (auto l = std::dynamic_pointer_cast<LinearImpl>(item.value())) linears.push_back({item.key(), l->weight.sizes().vec()});
  const std::vector<LinearInfo> listed = sd3MmditLinearLayers(c);
  ASSERT_EQ(listed.size(), linears.size());
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(listed[i].path, linears[i].first) << i;
    EXPECT_EQ((std::vector<int64_t>{listed[i].out, listed[i].in}), linears[i].second) << listed[i].path;
  }
}

TEST(Sd3Mmdit, ReleasedModelsShapes) {
  const Sd3MmditConfig m = Sd3MmditConfig::sd3Medium(), m5 = Sd3MmditConfig::sd35Medium(), l5 = Sd3MmditConfig::sd35Large();
  EXPECT_EQ(m.hiddenSize(), 1536);
  EXPECT_EQ(m.numHeads(), 24);
  EXPECT_EQ(m.modelType(), "medium");
  EXPECT_EQ(m5.modelType(), "5-medium");
  EXPECT_EQ(m5.xBlockSelfAttnLayers.size(), 13u);
  EXPECT_EQ(m5.posEmbedMaxSize, 384);
  EXPECT_EQ(l5.hiddenSize(), 2432);
  EXPECT_EQ(l5.numHeads(), 38);
  EXPECT_EQ(l5.modelType(), "5-large");
}

TEST(Sd3Mmdit, ForwardMatchesSdScriptsComputation) {
  Sd3Mmdit model = randomTiny();
  torch::manual_seed(11);
  const Tensor x = torch::randn({2, 16, 6, 8}), t = torch::tensor({900.0f, 30.0f}), y = torch::randn({2, 32});
  const Tensor context = torch::randn({2, 7, 32});
  torch::NoGradGuard noGrad;
  const Tensor out = model(x, t, y, context);
  const Tensor ref = referenceForward(model, x, t, y, context);
  ASSERT_EQ(out.sizes(), x.sizes());
  const double relative = ((out - ref).norm() / ref.norm()).item<double>();
  // float32 rounding of two operation orders (fused attention, LayerNorm) apart; a wrong part is ~1e-1.
  EXPECT_LT(relative, 1e-5) << relative;
  // Without qk norm and MMDiT-X's attn2 (SD 3 Medium's blocks), the same.
  Sd3MmditConfig plain = Sd3MmditConfig::tiny();
  plain.qkNormRms = false;
  plain.xBlockSelfAttnLayers.clear();
  Sd3Mmdit sd3 = randomTiny(plain);
  const Tensor out3 = sd3(x, t, y, context), ref3 = referenceForward(sd3, x, t, y, context);
  EXPECT_LT(((out3 - ref3).norm() / ref3.norm()).item<double>(), 1e-5);
}

// Each patch takes its own row of the table: moving the crop moves the output.
TEST(Sd3Mmdit, PositionTableIsCroppedAroundTheCentre) {
  Sd3Mmdit model = randomTiny();
  const Tensor table = model->pos_embed.view({32, 32, -1});
  const Tensor centred = model->croppedPosEmbed(3, 4, {}, torch::kCPU, torch::kFloat32);
  EXPECT_TRUE(torch::equal(centred.view({3, 4, -1}), table.slice(0, 14, 17).slice(1, 14, 18)));
  EXPECT_TRUE(torch::equal(model->croppedPosEmbed(3, 4, {0, 28}, torch::kCPU, torch::kFloat32).view({3, 4, -1}), table.slice(0, 0, 3).slice(1, 28, 32)));
  EXPECT_THROW(model->croppedPosEmbed(33, 4, {}, torch::kCPU, torch::kFloat32), std::invalid_argument);
  EXPECT_THROW(model->croppedPosEmbed(3, 4, {30, 0}, torch::kCPU, torch::kFloat32), std::invalid_argument);
  torch::NoGradGuard noGrad;
  const Tensor x = torch::randn({1, 16, 6, 8}), t = torch::tensor({500.0f}), y = torch::randn({1, 32}), ctx = torch::randn({1, 3, 32});
  EXPECT_FALSE(torch::allclose(model(x, t, y, ctx), model(x, t, y, ctx, Sd3PosEmbedCrop{0, 0})));
  EXPECT_THROW(model(torch::randn({1, 16, 5, 8}), t, y, ctx), std::invalid_argument);
}

// sd-scripts' get_2d_sincos_pos_embed: the first half of the channels encodes the column, [sin, cos].
TEST(Sd3Mmdit, SincosTableIsSdScripts) {
  const Tensor table = sd3SincosPosEmbed(8, 3);  // omega = 1 / 10000^(i/2), i = 0, 1
  ASSERT_EQ(table.sizes(), (std::vector<int64_t>{9, 8}));
  const int64_t row = 2, col = 1;
  const Tensor e = table[row * 3 + col];
  EXPECT_FLOAT_EQ(e[0].item<float>(), std::sin(1.0f));
  EXPECT_FLOAT_EQ(e[1].item<float>(), std::sin(0.01f));
  EXPECT_FLOAT_EQ(e[2].item<float>(), std::cos(1.0f));
  EXPECT_FLOAT_EQ(e[4].item<float>(), std::sin(2.0f));
  EXPECT_FLOAT_EQ(e[7].item<float>(), std::cos(0.02f));
}

// get_scaled_2d_sincos_pos_embed(8, 48, sample_size=32): scale 16·48/32 = 24, shift 24·16/96 = 4, so
// the positions are i/2 - 4 and the middle 32 patches span base_size's 16 positions.
TEST(Sd3Mmdit, ScaledSincosTableIsSdScripts) {
  const Tensor table = sd3ScaledSincosPosEmbed(8, 48, 32);
  ASSERT_EQ(table.sizes(), (std::vector<int64_t>{48 * 48, 8}));
  const int64_t row = 10, col = 9;  // positions 1.0 (row) and 0.5 (column)
  const Tensor e = table[row * 48 + col];
  EXPECT_FLOAT_EQ(e[0].item<float>(), std::sin(0.5f));
  EXPECT_FLOAT_EQ(e[1].item<float>(), std::sin(0.005f));
  EXPECT_FLOAT_EQ(e[2].item<float>(), std::cos(0.5f));
  EXPECT_FLOAT_EQ(e[4].item<float>(), std::sin(1.0f));
  EXPECT_FLOAT_EQ(e[7].item<float>(), std::cos(0.01f));
  EXPECT_FLOAT_EQ(table[0][0].item<float>(), std::sin(-4.0f));
}

// enable_scaled_pos_embed for latent sizes 64 and 128 (512 and 1024 px): tables of 32 and 64 patches
// made 48 and 96 wide; an image takes the smaller up to halfway between the areas (2560 patches), the
// larger up to its whole table (96², 9216); one wider than its table adds its own.
TEST(Sd3Mmdit, ScaledTablesAreChosenByAreaAsSdScripts) {
  Sd3ScaledPosEmbeds tables(8, 2, {128, 64, 64});
  EXPECT_EQ(tables.areaToPatchedSize(), (std::vector<std::pair<int64_t, int64_t>>{{2560, 32}, {9216, 64}}));
  EXPECT_EQ(tables.sideFor(40, 40), 48);
  EXPECT_EQ(tables.sideFor(30, 48), 48);
  EXPECT_EQ(tables.sideFor(52, 52), 96);
  EXPECT_EQ(tables.sideFor(90, 96), 96);
  EXPECT_TRUE(torch::equal(tables.tableFor(40, 40, torch::kCPU, torch::kFloat32)[0], sd3ScaledSincosPosEmbed(8, 48, 32)));
  EXPECT_EQ(tables.sideFor(100, 10), 150);  // 100 patches tall, wider than 48: a table for 100, 150 wide
  EXPECT_EQ(tables.areaToPatchedSize().back(), (std::pair<int64_t, int64_t>{22500, 100}));
  EXPECT_EQ(tables.sideFor(120, 120), 150);  // beyond every bound: the largest, which fits it
  EXPECT_THROW(Sd3ScaledPosEmbeds(8, 2, {}), std::invalid_argument);
}

// The MMDiT with scaled positions crops the scaled table around its centre, and computes otherwise.
TEST(Sd3Mmdit, ScaledPositionsReplaceTheStoredTable) {
  Sd3Mmdit model = randomTiny();
  torch::NoGradGuard noGrad;
  const Tensor x = torch::randn({1, 16, 6, 8}), t = torch::tensor({500.0f}), y = torch::randn({1, 32}), ctx = torch::randn({1, 3, 32});
  const Tensor stored = model(x, t, y, ctx);
  model->enableScaledPosEmbed({8});  // 64 px: 4 patches, a table 6 wide
  EXPECT_TRUE(model->scaledPosEmbed());
  EXPECT_EQ(model->posTableSide(3, 4), 6);
  const Tensor table = sd3ScaledSincosPosEmbed(model->config().hiddenSize(), 6, 4).view({6, 6, -1});
  EXPECT_TRUE(torch::equal(model->croppedPosEmbed(3, 4, {}, torch::kCPU, torch::kFloat32).view({3, 4, -1}),
                           table.slice(0, 1, 4).slice(1, 1, 5)));
  EXPECT_FALSE(torch::allclose(model(x, t, y, ctx), stored));
}

TEST(Sd3Mmdit, ShapeIsReadFromASingleFile) {
  const sinter::test::TempDir dir;
  Sd3MmditConfig c = Sd3MmditConfig::tiny();
  c.depth = 3;
  c.xBlockSelfAttnLayers = {0, 1};
  Sd3Mmdit model = randomTiny(c);
  const std::string path = dir / "sd3.safetensors";
  io::writeSafetensors(path, model->checkpointTensors("model.diffusion_model."));
  const io::SafetensorsFile file(path);
  const Sd3MmditConfig read = Sd3MmditConfig::inferFromCheckpoint(file, "model.diffusion_model.");
  EXPECT_TRUE(read == c);
  EXPECT_EQ(read.modelType(), "5-medium");
  Sd3Mmdit loaded(read);
  loaded->loadFromCheckpoint(file, "model.diffusion_model.");
  torch::NoGradGuard noGrad;
  const Tensor x = torch::randn({1, 16, 4, 4}), t = torch::tensor({250.0f}), y = torch::randn({1, 32}), ctx = torch::randn({1, 2, 32});
  EXPECT_TRUE(torch::equal(loaded(x, t, y, ctx), model(x, t, y, ctx)));
  // The file under another prefix: the missing key is named.
  try {
    Sd3MmditConfig::inferFromCheckpoint(file, "");
    FAIL() << "no error";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("x_embedder.proj.weight"), std::string::npos) << e.what();
  }
  EXPECT_NE(describeCheckpointFamily(file).find("SD 3"), std::string::npos);
}

// network_args as sd-scripts' networks.lora / networks.lora_flux take them, through the real
// models (tiny SDXL UNet, tiny FLUX transformer): conv_dim's 3x3 conv adapters (names, shapes,
// forward, save/load, dim_from_weights), rank/module dropout, block dims and alphas, per-block
// learning rates, lora_flux's block indices and type dims, and the keys this build refuses.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "models/layers/conv2d.h"
#include "models/flux/flux_transformer.h"
#include "models/layers/linear.h"
#include "models/unet/sdxl_unet.h"
#include "network/lora_file.h"
#include "network/lora_network.h"
#include "network/lora_targets.h"

using namespace sinter;
using namespace sinter::network;
namespace F = torch::nn::functional;

namespace {

models::SdxlUnet tinyUnet() { return models::SdxlUnet(models::SdxlUnetConfig::tiny()); }

std::string joinInts(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::string messageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::map<std::string, torch::Tensor> asMap(const std::vector<std::pair<std::string, torch::Tensor>>& sd) {
  return {sd.begin(), sd.end()};
}

torch::Tensor runUnet(models::SdxlUnet& unet, int seed) {
  torch::manual_seed(seed);
  const auto& c = models::SdxlUnetConfig::tiny();
  const torch::Tensor x = torch::randn({1, 4, 16, 16}), t = torch::tensor({500.0});
  const torch::Tensor ctx = torch::randn({1, 3, c.contextDim}), y = torch::randn({1, c.admInChannels});
  return unet->forward(x, t, ctx, y);
}

}  // namespace

TEST(NetworkArgs, ConvDimAdaptsTheResnetDownsampleAndUpsampleConvsWithSdScriptsNames) {
  torch::manual_seed(1);
  models::SdxlUnet unet = tinyUnet();
  LoraNetworkOptions plain;
  LoraNetwork without(plain);
  const size_t linearsOnly = without.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
  without.detach();

  LoraNetworkOptions o;
  o.dim = 4;
  o.alpha = 2.0;
  o.args = parseNetworkArgs({"conv_dim=3", "conv_alpha=1.5"});
  LoraNetwork net(o);
  const size_t attached = net.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
  EXPECT_GT(attached, linearsOnly);

  auto expectModule = [&](const std::string& name, std::vector<int64_t> down, std::vector<int64_t> up, double alpha) {
    const LoraModule* m = net.find(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->adapter->down.sizes().vec(), down) << name;
    EXPECT_EQ(m->adapter->up.sizes().vec(), up) << name;
    EXPECT_DOUBLE_EQ(m->adapter->alpha, alpha) << name;
  };
  // 3x3 convs at conv_dim/conv_alpha: lora_down a 3x3 conv, lora_up 1x1.
  expectModule("lora_unet_input_blocks_1_0_in_layers_2", {3, 32, 3, 3}, {32, 3, 1, 1}, 1.5);
  expectModule("lora_unet_input_blocks_1_0_out_layers_3", {3, 32, 3, 3}, {32, 3, 1, 1}, 1.5);
  expectModule("lora_unet_input_blocks_2_0_op", {3, 32, 3, 3}, {32, 3, 1, 1}, 1.5);  // Downsample, stride 2
  expectModule("lora_unet_middle_block_2_in_layers_2", {3, 128, 3, 3}, {128, 3, 1, 1}, 1.5);
  expectModule("lora_unet_output_blocks_1_2_conv", {3, 128, 3, 3}, {128, 3, 1, 1}, 1.5);  // Upsample
  // ResnetBlock2D's Linear and 1x1 conv at network_dim/network_alpha (sd-scripts targets the whole block).
  expectModule("lora_unet_input_blocks_3_0_skip_connection", {4, 32, 1, 1}, {64, 4, 1, 1}, 2.0);
  expectModule("lora_unet_input_blocks_1_0_emb_layers_1", {4, 128}, {32, 4}, 2.0);
  // Still the transformer Linears; never conv_in, the embeddings or out.
  expectModule("lora_unet_input_blocks_3_1_proj_in", {4, 64}, {64, 4}, 2.0);
  for (const char* absent : {"lora_unet_input_blocks_0_0", "lora_unet_time_embed_0", "lora_unet_label_emb_0_0", "lora_unet_out_2"})
    EXPECT_EQ(net.find(absent), nullptr) << absent;

  // Saved as sd-scripts writes them.
  const auto sd = asMap(net.stateDict(torch::kFloat16));
  ASSERT_TRUE(sd.count("lora_unet_input_blocks_1_0_in_layers_2.lora_down.weight"));
  EXPECT_EQ(sd.at("lora_unet_input_blocks_1_0_in_layers_2.lora_down.weight").sizes().vec(), (std::vector<int64_t>{3, 32, 3, 3}));
  EXPECT_EQ(sd.at("lora_unet_input_blocks_1_0_in_layers_2.lora_up.weight").sizes().vec(), (std::vector<int64_t>{32, 3, 1, 1}));
  EXPECT_EQ(sd.at("lora_unet_input_blocks_1_0_in_layers_2.alpha").dim(), 0);
  EXPECT_FLOAT_EQ(sd.at("lora_unet_input_blocks_1_0_in_layers_2.alpha").item<float>(), 1.5f);
  EXPECT_EQ(sd.at("lora_unet_input_blocks_1_0_in_layers_2.lora_down.weight").scalar_type(), torch::kFloat16);
}

TEST(NetworkArgs, ConvLoraForwardIsBasePlusScaledUpOfDown) {
  torch::manual_seed(2);
  for (int64_t stride : {1, 2}) {
    models::Conv2d conv(6, 5, 3, stride, 1);
    auto lora = std::make_shared<models::LoraAdapter>();
    lora->down = torch::randn({2, 6, 3, 3}).requires_grad_(true);
    lora->up = torch::randn({5, 2, 1, 1}).requires_grad_(true);
    lora->alpha = 3.0;  // scale 1.5
    lora->multiplier = 0.5;
    const torch::Tensor x = torch::randn({2, 6, 9, 9}, torch::kFloat64);
    const torch::Tensor base = F::conv2d(x, conv->weight.to(torch::kFloat64),
                                         F::Conv2dFuncOptions().bias(conv->bias.to(torch::kFloat64)).stride(stride).padding(1));
    conv->lora = lora;
    const torch::Tensor y = conv->forward(x.to(torch::kFloat32));
    // up(down(x)) directly: a [out, in, 3, 3] kernel sum_r up[o, r] down[r, i].
    const torch::Tensor merged = torch::einsum("or,rikl->oikl", {lora->up.detach().to(torch::kFloat64).flatten(1),
                                                                 lora->down.detach().to(torch::kFloat64)});
    const torch::Tensor expected = base + 1.5 * 0.5 * F::conv2d(x, merged, F::Conv2dFuncOptions().stride(stride).padding(1));
    ASSERT_EQ(y.sizes(), expected.sizes());
    // float32 convolutions of 54-term sums: relative error well under 1e-5.
    EXPECT_LT(((y.to(torch::kFloat64) - expected).abs().max() / expected.abs().max()).item<double>(), 1e-5) << stride;
    y.sum().backward();
    EXPECT_GT(lora->up.grad().abs().sum().item<float>(), 0.0f);
    EXPECT_GT(lora->down.grad().abs().sum().item<float>(), 0.0f);
  }
}

TEST(NetworkArgs, ConvAdaptersSaveLoadAndTakeTheirRanksFromTheFile) {
  models::SdxlUnet unet = tinyUnet();
  LoraNetworkOptions o;
  o.args = parseNetworkArgs({"conv_dim=2", "conv_alpha=1"});
  std::map<std::string, torch::Tensor> saved;
  torch::Tensor adapted;
  {
    LoraNetwork net(o);
    net.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
    torch::NoGradGuard g;
    for (const LoraModule& m : net.modules()) m.adapter->up.normal_(0.0, 0.1);
    saved = asMap(net.stateDict(torch::kFloat32));
    net.setTraining(false);
    adapted = runUnet(unet, 9);
    net.detach();
  }
  const torch::Tensor plainOut = runUnet(unet, 9);
  EXPECT_FALSE(torch::allclose(plainOut, adapted));

  // dim_from_weights: no conv_dim given, the conv ranks come from the file (create_network_from_weights).
  LoraNetworkOptions fromFile;
  fromFile.moduleRanks = readLoraModuleRanks(saved);
  LoraNetwork loaded(fromFile);
  loaded.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
  EXPECT_EQ(loaded.find("lora_unet_input_blocks_1_0_in_layers_2")->adapter->down.sizes().vec(), (std::vector<int64_t>{2, 32, 3, 3}));
  const LoraLoadReport r = loaded.loadStateDict(saved, "saved.safetensors");
  EXPECT_TRUE(r.missing.empty());
  EXPECT_TRUE(r.unexpected.empty());
  EXPECT_EQ(r.loadedModules * 3, saved.size());
  loaded.setTraining(false);
  EXPECT_TRUE(torch::equal(runUnet(unet, 9), adapted));
  loaded.detach();

  // network_weights with another conv_dim: the shape error names the key.
  LoraNetworkOptions other;
  other.args = parseNetworkArgs({"conv_dim=5"});
  LoraNetwork wrong(other);
  wrong.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
  const std::string msg = messageOf([&] { wrong.loadStateDict(saved, "saved.safetensors"); });
  EXPECT_NE(msg.find("saved.safetensors"), std::string::npos) << msg;
  EXPECT_NE(msg.find("lora_down.weight has shape [2, "), std::string::npos) << msg;
}

TEST(NetworkArgs, RankDropoutMasksWholeRanksPerSampleAndRescales) {
  models::Linear fc(models::LinearImpl(8, 8, false));
  torch::NoGradGuard g;
  fc->weight.zero_();
  auto lora = std::make_shared<models::LoraAdapter>();
  lora->down = torch::eye(8);
  lora->up = torch::eye(8);
  lora->alpha = 4.0;  // scale 0.5
  lora->rankDropout = 0.25;
  fc->lora = lora;
  fc->train(true);
  torch::manual_seed(11);
  const torch::Tensor y = fc->forward(torch::ones({2000, 5, 8}));
  // Every entry is 0 or 0.5 / (1 - 0.25); the same along the sequence (one mask per sample and rank).
  const double kept = 0.5 / 0.75;
  EXPECT_TRUE(torch::allclose(y.select(1, 0).unsqueeze(1).expand_as(y), y));
  const torch::Tensor zero = y.select(1, 0) == 0;
  EXPECT_TRUE(torch::allclose(y.select(1, 0).masked_select(~zero), torch::full({1}, kept)));
  // 16000 Bernoulli(0.25) draws: standard deviation 0.0034.
  EXPECT_NEAR(zero.to(torch::kFloat64).mean().item<double>(), 0.25, 0.02);
  // The same seed gives the same masks; evaluation applies none.
  torch::manual_seed(11);
  EXPECT_TRUE(torch::equal(fc->forward(torch::ones({2000, 5, 8})), y));
  fc->train(false);
  EXPECT_TRUE(torch::allclose(fc->forward(torch::ones({3, 8})), torch::full({3, 8}, 0.5)));
}

TEST(NetworkArgs, RankDropoutOnAConvMasksChannelsAcrossThePlane) {
  models::Conv2d conv(4, 4, 1);
  torch::NoGradGuard g;
  conv->weight.zero_();
  conv->bias.zero_();
  auto lora = std::make_shared<models::LoraAdapter>();
  lora->down = torch::eye(4).reshape({4, 4, 1, 1});
  lora->up = torch::eye(4).reshape({4, 4, 1, 1});
  lora->rankDropout = 0.5;
  conv->lora = lora;
  conv->train(true);
  torch::manual_seed(12);
  const torch::Tensor y = conv->forward(torch::ones({500, 4, 3, 3}));
  const torch::Tensor corner = y.select(3, 0).select(2, 0);  // [B, C]
  EXPECT_TRUE(torch::allclose(corner.unsqueeze(-1).unsqueeze(-1).expand_as(y), y));
  EXPECT_NEAR((corner == 0).to(torch::kFloat64).mean().item<double>(), 0.5, 0.05);  // sd 0.011
  EXPECT_TRUE(torch::allclose(corner.masked_select(corner != 0), torch::full({1}, 0.25 / 0.5)));  // alpha 1 / rank 4 / (1 - p)
}

TEST(NetworkArgs, ModuleDropoutDropsTheWholeAdapterWithItsProbability) {
  models::Linear fc(models::LinearImpl(4, 3));
  auto lora = std::make_shared<models::LoraAdapter>();
  lora->down = torch::randn({2, 4}).requires_grad_(true);
  lora->up = torch::randn({3, 2}).requires_grad_(true);
  lora->moduleDropout = 0.3;
  fc->lora = lora;
  fc->train(true);
  for (auto& p : fc->parameters()) p.set_requires_grad(false);
  const torch::Tensor x = torch::randn({6, 4});
  const torch::Tensor base = F::linear(x, fc->weight, fc->bias);
  const torch::Tensor full = base + torch::matmul(torch::matmul(x, lora->down.t()), lora->up.t()).detach() * 0.5;
  torch::manual_seed(13);
  int dropped = 0;
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    const torch::Tensor y = fc->forward(x).detach();
    if (torch::allclose(y, base)) ++dropped;
    else EXPECT_TRUE(torch::allclose(y, full, 1e-5, 1e-5));
  }
  EXPECT_NEAR(static_cast<double>(dropped) / n, 0.3, 0.04);  // sd 0.010
  // A dropped adapter gets zero gradients.
  torch::manual_seed(13);
  for (int i = 0; i < 50; ++i) {
    lora->up.mutable_grad() = torch::Tensor();
    const torch::Tensor y = fc->forward(x);
    y.sum().backward();
    if (torch::allclose(y.detach(), base)) EXPECT_EQ(lora->up.grad().abs().sum().item<float>(), 0.0f);
  }
  // Module dropout alone draws numbers too: checkpointed recomputation keeps the RNG state.
  torch::nn::Sequential holder(fc);
  EXPECT_TRUE(models::anyLoraDropout(*holder));
}

TEST(NetworkArgs, NetworkPassesTheDropoutsToEveryAdapter) {
  models::SdxlUnet unet = tinyUnet();
  LoraNetworkOptions o;
  o.dropout = 0.1;
  o.args = parseNetworkArgs({"rank_dropout=0.2", "module_dropout=0.05", "conv_dim=2"});
  LoraNetwork net(o);
  net.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
  for (const LoraModule& m : net.modules()) {
    EXPECT_DOUBLE_EQ(m.adapter->dropout, 0.1);
    EXPECT_DOUBLE_EQ(m.adapter->rankDropout, 0.2);
    EXPECT_DOUBLE_EQ(m.adapter->moduleDropout, 0.05);
  }
  EXPECT_TRUE(models::anyLoraDropout(*unet));
  // The same seed, the same training forward (the draws come from the seeded generator).
  net.setTraining(true);
  {
    torch::NoGradGuard g;
    for (const LoraModule& m : net.modules()) m.adapter->up.normal_();
  }
  const torch::Tensor a = runUnet(unet, 21), b = runUnet(unet, 21);
  EXPECT_TRUE(torch::equal(a, b));
  // ...and the draws matter: evaluation (no dropout) gives another output.
  net.setTraining(false);
  EXPECT_FALSE(torch::allclose(runUnet(unet, 21), a));
  EXPECT_THROW(parseNetworkArgs({"rank_dropout=1"}), LoraError);
  EXPECT_THROW(parseNetworkArgs({"module_dropout=-0.1"}), LoraError);
}

TEST(NetworkArgs, BlockDimsAndAlphasGivePerBlockRanks) {
  models::SdxlUnet unet = tinyUnet();
  std::vector<int64_t> dims(23), convDims(23);
  std::string alphas;
  for (int i = 0; i < 23; ++i) {
    dims[i] = i + 1;
    convDims[i] = 23 - i;
    alphas += (i ? "," : "") + std::to_string(i) + ".5";
  }
  dims[11] = 0;  // middle_block.1: left out
  LoraNetworkOptions o;
  o.args = parseNetworkArgs({"block_dims=" + joinInts(dims), "block_alphas=" + alphas, "conv_block_dims=" + joinInts(convDims)});
  LoraNetwork net(o);
  net.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
  auto rankOf = [&](const std::string& name) {
    const LoraModule* m = net.find(name);
    return m ? m->adapter->rank() : 0;
  };
  EXPECT_EQ(sdxlBlockIndex("lora_unet_input_blocks_3_1_proj_in"), 4);
  EXPECT_EQ(sdxlBlockIndex("lora_unet_middle_block_2_in_layers_2"), 12);
  EXPECT_EQ(sdxlBlockIndex("lora_unet_output_blocks_8_0_skip_connection"), 21);
  EXPECT_EQ(sdxlBlockIndex("lora_te1_text_model_encoder_layers_0_mlp_fc1"), -1);
  EXPECT_EQ(rankOf("lora_unet_input_blocks_3_1_proj_in"), 5);  // block 4
  EXPECT_DOUBLE_EQ(net.find("lora_unet_input_blocks_3_1_proj_in")->adapter->alpha, 4.5);
  EXPECT_EQ(rankOf("lora_unet_input_blocks_3_0_emb_layers_1"), 5);
  EXPECT_EQ(rankOf("lora_unet_input_blocks_3_0_in_layers_2"), 23 - 4);  // conv_block_dims
  EXPECT_DOUBLE_EQ(net.find("lora_unet_input_blocks_3_0_in_layers_2")->adapter->alpha, 1.0);  // conv_alpha's default
  EXPECT_EQ(rankOf("lora_unet_middle_block_1_proj_in"), 0);
  EXPECT_EQ(rankOf("lora_unet_middle_block_2_in_layers_2"), 23 - 12);
  EXPECT_EQ(rankOf("lora_unet_output_blocks_2_1_transformer_blocks_0_attn1_to_q"), 16);  // block 15
  // Wrong counts name the key and the expected count.
  const std::string msg = messageOf([] { parseNetworkArgs({"block_dims=4,4,4"}); });
  EXPECT_NE(msg.find("block_dims must have 23"), std::string::npos) << msg;
}

TEST(NetworkArgs, BlockLrWeightsGiveSdScriptsParameterGroups) {
  const double kPi = std::acos(-1.0);
  // Presets over 9 blocks, "+number" added.
  const std::vector<double> sine = namedBlockLrWeights("down_lr_weight", "sine");
  EXPECT_DOUBLE_EQ(sine[0], 0.0);
  EXPECT_DOUBLE_EQ(sine[8], 1.0);
  EXPECT_NEAR(sine[3], std::sin(kPi * (3.0 / 8.0) / 2.0), 1e-15);
  EXPECT_NEAR(namedBlockLrWeights("x", "cosine")[3], std::sin(kPi * (5.0 / 8.0) / 2.0), 1e-15);
  EXPECT_DOUBLE_EQ(namedBlockLrWeights("x", "linear")[2], 0.25);
  EXPECT_DOUBLE_EQ(namedBlockLrWeights("x", "reverse_linear+0.5")[2], 1.25);
  EXPECT_EQ(namedBlockLrWeights("x", "zeros+0.5"), std::vector<double>(9, 0.5));
  EXPECT_NE(messageOf([] { parseNetworkArgs({"down_lr_weight=wave"}); }).find("down_lr_weight=wave"), std::string::npos);

  // down: a preset; mid: a short list (padded with 1, the empty item is 0); up: a list, and a
  // threshold that zeroes weights not above it.
  const LoraNetworkArgs a = parseNetworkArgs({"down_lr_weight=linear+0.1", "mid_lr_weight=0.5,", "up_lr_weight=2,0.2,3",
                                              "block_lr_zero_threshold=0.2", "loraplus_unet_lr_ratio=4"});
  ASSERT_TRUE(a.blockLrWeight);
  std::vector<double> expected{1.0};
  for (int i = 0; i < 9; ++i) expected.push_back(i / 8.0 + 0.1 > 0.2 ? i / 8.0 + 0.1 : 0.0);
  for (double w : {0.5, 0.0, 1.0}) expected.push_back(w);
  for (double w : {2.0, 0.0, 3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}) expected.push_back(w);
  expected.push_back(1.0);
  ASSERT_EQ(a.blockLrWeight->size(), 23u);
  for (int i = 0; i < 23; ++i) EXPECT_NEAR((*a.blockLrWeight)[i], expected[i], 1e-15) << i;

  models::SdxlUnet unet = tinyUnet();
  LoraNetworkOptions o;
  o.args = a;
  LoraNetwork net(o);
  net.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
  // Blocks weighted 0 get no modules (remove_block_dims_and_alphas): input_blocks.0 (never has
  // any), middle_block.1, output_blocks.1.
  for (const LoraModule& m : net.modules()) {
    const int block = sdxlBlockIndex(m.name);
    EXPECT_NE(expected[block], 0.0) << m.name;
  }
  const double unetLr = 1e-3;
  const std::vector<LoraParamGroup> groups = net.parameterGroups(std::nullopt, unetLr, 1e-4);
  std::map<std::string, double> lrByLabel;
  for (const LoraParamGroup& g : groups) lrByLabel[g.label] = g.lr;
  // Blocks holding transformer Linears: input_blocks.3/4/5 (blocks 4-6), middle_block.1 (dropped),
  // output_blocks.0-3 (13-16, 14 dropped).
  const std::map<std::string, double> want{
      {"unet_block4", unetLr * expected[4]},        {"unet_block4 plus", unetLr * expected[4] * 4},
      {"unet_block6", unetLr * expected[6]},        {"unet_block6 plus", unetLr * expected[6] * 4},
      {"unet_block13", unetLr * 2.0},               {"unet_block13 plus", unetLr * 2.0 * 4},
      {"unet_block15", unetLr * 3.0},               {"unet_block15 plus", unetLr * 3.0 * 4},
      {"unet_block16", unetLr * 1.0},               {"unet_block16 plus", unetLr * 1.0 * 4}};
  for (const auto& [label, lr] : want) {
    ASSERT_TRUE(lrByLabel.count(label)) << label;
    EXPECT_NEAR(lrByLabel.at(label), lr, 1e-18) << label;
  }
  EXPECT_FALSE(lrByLabel.count("unet_block11"));
  EXPECT_FALSE(lrByLabel.count("unet_block14"));
  EXPECT_FALSE(lrByLabel.count("unet"));
  // Every adapter parameter is in exactly one group.
  size_t params = 0;
  for (const LoraParamGroup& g : groups) params += g.params.size();
  EXPECT_EQ(params, net.modules().size() * 2);
}

TEST(NetworkArgs, LoraFluxBlockIndicesAndTypeDims) {
  const models::FluxConfig config = models::FluxConfig::tiny();
  models::FluxTransformer transformer(config);
  LoraNetworkOptions o;
  o.dim = 4;
  o.args = parseNetworkArgs({"train_double_block_indices=1", "train_single_block_indices=0-0", "img_attn_dim=8",
                             "single_mod_dim=0", "txt_mlp_dim=2", "verbose=True", "split_qkv=False"});
  LoraNetwork net(o);
  net.attach(fluxLoraRule(LoraComponent::Unet), *transformer);
  auto rankOf = [&](const std::string& name) {
    const LoraModule* m = net.find(name);
    return m ? m->adapter->rank() : 0;
  };
  EXPECT_EQ(rankOf("lora_unet_double_blocks_0_img_attn_qkv"), 0);  // not in train_double_block_indices
  EXPECT_EQ(rankOf("lora_unet_double_blocks_1_img_attn_qkv"), 8);
  EXPECT_EQ(rankOf("lora_unet_double_blocks_1_img_attn_proj"), 8);
  EXPECT_EQ(rankOf("lora_unet_double_blocks_1_txt_attn_qkv"), 4);
  EXPECT_EQ(rankOf("lora_unet_double_blocks_1_txt_mlp_0"), 2);
  EXPECT_EQ(rankOf("lora_unet_single_blocks_0_linear1"), 4);
  EXPECT_EQ(rankOf("lora_unet_single_blocks_0_modulation_lin"), 0);  // single_mod_dim=0
  EXPECT_EQ(rankOf("lora_unet_single_blocks_1_linear1"), 0);
  EXPECT_NE(messageOf([] { parseNetworkArgs({"train_double_block_indices=3-1"}); }).find("train_double_block_indices"),
            std::string::npos);
  EXPECT_NE(messageOf([] { parseNetworkArgs({"train_single_block_indices=38"}); }).find("not in 0-37"), std::string::npos);
}

TEST(NetworkArgs, RefusedAndForeignKeysAreNamed) {
  auto refusal = [](const std::string& arg) { return messageOf([&] { parseNetworkArgs({arg}); }); };
  EXPECT_NE(refusal("conv_dims=4").find("'conv_dims'"), std::string::npos);
  EXPECT_NE(refusal("split_qkv=True").find("split_qkv=True"), std::string::npos);
  // train_t5xxl as lora_flux reads it: only "True" is true.
  EXPECT_TRUE(parseNetworkArgs({"train_t5xxl=True"}).trainT5xxl);
  EXPECT_FALSE(parseNetworkArgs({"train_t5xxl=true"}).trainT5xxl);
  EXPECT_FALSE(parseNetworkArgs({}).trainT5xxl);
  EXPECT_NE(refusal("in_dims=[4,0,0,0,4]").find("'in_dims'"), std::string::npos);
  EXPECT_NE(refusal("ggpo_sigma=0.03").find("GGPO"), std::string::npos);
  EXPECT_NE(refusal("network_reg_dims=attn=8").find("'network_reg_dims'"), std::string::npos);
  EXPECT_NE(refusal("conv_dim=two").find("conv_dim=two"), std::string::npos);

  // Each network module's own keys: block_dims is networks.lora's, train_blocks lora_flux's.
  models::SdxlUnet unet = tinyUnet();
  LoraNetworkOptions fluxArgs;
  fluxArgs.args = parseNetworkArgs({"train_blocks=single"});
  LoraNetwork sdxlNet(fluxArgs);
  EXPECT_NE(messageOf([&] { sdxlNet.attach(sdxlLoraRule(LoraComponent::Unet), *unet); }).find("train_blocks"), std::string::npos);
  models::FluxTransformer transformer(models::FluxConfig::tiny());
  LoraNetworkOptions sdxlArgs;
  sdxlArgs.args = parseNetworkArgs({"down_lr_weight=sine"});
  LoraNetwork fluxNet(sdxlArgs);
  const std::string msg = messageOf([&] { fluxNet.attach(fluxLoraRule(LoraComponent::Unet), *transformer); });
  EXPECT_NE(msg.find("down_lr_weight is an argument of networks.lora (SD 1.x/2.x and SDXL), not of FLUX's networks.lora_flux"), std::string::npos) << msg;
}

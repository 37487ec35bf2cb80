// networks.lora_sd3 on the real MMDiT (tiny): the modules and kohya names sd-scripts' create_network
// makes (every Linear of the SingleDiTBlocks, none of the embedders), its type dims and
// train_block_indices, emb_dims (the embedders and final layer), and the keys that belong to another network module.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <optional>
#include <tuple>
#include <set>
#include <string>
#include <vector>

#include "models/layers/linear.h"
#include "models/sd3/sd3_mmdit.h"
#include "models/text_encoders/clip_text_model.h"
#include "models/text_encoders/t5_encoder.h"
#include "models/unet/sdxl_unet.h"
#include "network/lora_network.h"
#include "network/lora_targets.h"

using namespace sinter;
using namespace sinter::network;

namespace {

models::Sd3Mmdit tinyMmdit() {
  models::Sd3MmditConfig c = models::Sd3MmditConfig::tiny();
  c.depth = 3;
  c.xBlockSelfAttnLayers = {0};
  return models::Sd3Mmdit(c);
}

std::vector<LinearShape> linearsOf(torch::nn::Module& root) {
  std::vector<LinearShape> out;
  for (const auto& item : root.named_modules("", false))
    if (auto l = std::dynamic_pointer_cast<models::LinearImpl>(item.value())) out.push_back({item.key(), l->inFeatures(), l->outFeatures()});
  return out;
}

std::string messageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Sd3Lora, ModulesAreTheSingleDiTBlocksLinears) {
  models::Sd3Mmdit mmdit = tinyMmdit();
  const std::vector<LoraModuleShape> modules = listLoraModules(sd3LoraRule(LoraComponent::Unet), linearsOf(*mmdit));
  std::set<std::string> names;
  for (const LoraModuleShape& m : modules) names.insert(m.name);
  // 5 per stream (attn.qkv, attn.proj, mlp.fc1, mlp.fc2, adaLN_modulation.1), 2 in the last
  // context block (pre_only), 2 more for block 0's attn2.
  EXPECT_EQ(modules.size(), 3u * 10 - 3 + 2);
  for (const char* name : {"lora_unet_joint_blocks_0_x_block_attn_qkv", "lora_unet_joint_blocks_0_x_block_attn2_proj",
                           "lora_unet_joint_blocks_1_context_block_mlp_fc1", "lora_unet_joint_blocks_1_x_block_adaLN_modulation_1",
                           "lora_unet_joint_blocks_2_context_block_attn_qkv", "lora_unet_joint_blocks_2_context_block_adaLN_modulation_1",
                           "lora_unet_joint_blocks_2_x_block_mlp_fc2"})
    EXPECT_TRUE(names.count(name)) << name;
  for (const char* name : {"lora_unet_joint_blocks_2_context_block_attn_proj", "lora_unet_context_embedder",
                           "lora_unet_t_embedder_mlp_0", "lora_unet_final_layer_linear", "lora_unet_joint_blocks_1_x_block_attn2_qkv"})
    EXPECT_FALSE(names.count(name)) << name;
}

TEST(Sd3Lora, TypeDimsAndBlockIndicesAsLoraSd3) {
  models::Sd3Mmdit mmdit = tinyMmdit();
  LoraNetworkOptions options;
  options.dim = 4;
  options.alpha = 2.0;
  options.args = parseNetworkArgs({"x_mlp_dim=0", "context_attn_dim=8", "train_block_indices=0,2"}, "networks.lora_sd3");
  LoraNetwork net(options);
  net.attach(sd3LoraRule(LoraComponent::Unet), *mmdit);
  std::set<std::string> names;
  for (const LoraModule& m : net.modules()) names.insert(m.name);
  EXPECT_FALSE(names.count("lora_unet_joint_blocks_0_x_block_mlp_fc1"));  // x_mlp_dim=0
  EXPECT_FALSE(names.count("lora_unet_joint_blocks_1_x_block_attn_qkv"));  // block 1 not trained
  ASSERT_TRUE(net.find("lora_unet_joint_blocks_0_context_block_attn_proj"));
  EXPECT_EQ(net.find("lora_unet_joint_blocks_0_context_block_attn_proj")->adapter->rank(), 8);
  EXPECT_EQ(net.find("lora_unet_joint_blocks_2_context_block_attn_qkv")->adapter->rank(), 8);
  EXPECT_EQ(net.find("lora_unet_joint_blocks_0_x_block_attn2_qkv")->adapter->rank(), 4);  // "attn": x_attn_dim unset
  EXPECT_EQ(net.find("lora_unet_joint_blocks_2_x_block_adaLN_modulation_1")->adapter->rank(), 4);
  // Block 0: 5 in x (no MLP, attn2) + 5 in context; block 2 (the last): 3 in x + 2 in context.
  EXPECT_EQ(net.modules().size(), 15u);
}

// emb_dims = [context, t, x, y, final_mod, final_linear]: lora_sd3's filters over the whole MMDiT, each
// at its own rank (0 leaves it out), the x_embedder's 2x2 patch conv as a conv LoRA of its kernel.
TEST(Sd3Lora, EmbDimsAddTheEmbeddersAndFinalLayer) {
  models::Sd3Mmdit mmdit = tinyMmdit();
  LoraNetworkOptions o;
  o.dim = 4;
  o.alpha = 2.0;
  o.args = parseNetworkArgs({"emb_dims=[3, 5, 6, 0, 7, 2]"}, "networks.lora_sd3");
  LoraNetwork net(o);
  const std::vector<int64_t> embDims = o.args.sd3EmbDims;
  net.attach(sd3LoraRule(LoraComponent::Unet, embDims), *mmdit);
  const std::vector<std::pair<std::string, int64_t>> expected{
      {"lora_unet_context_embedder", 3},         {"lora_unet_t_embedder_mlp_0", 5},          {"lora_unet_t_embedder_mlp_2", 5},
      {"lora_unet_x_embedder_proj", 6},          {"lora_unet_final_layer_adaLN_modulation_1", 7}, {"lora_unet_final_layer_linear", 2}};
  for (const auto& [name, rank] : expected) {
    const LoraModule* m = net.find(name);
    ASSERT_TRUE(m) << name;
    EXPECT_EQ(m->adapter->rank(), rank) << name;
    EXPECT_EQ(m->adapter->alpha, 2.0) << name;
  }
  EXPECT_FALSE(net.find("lora_unet_y_embedder_mlp_0"));  // y: 0
  EXPECT_EQ(net.modules().size(), (3u * 10 - 3 + 2) + expected.size());
  // The patch conv's down is a 2x2 conv of the latent channels (stride 2, as the base), its up 1x1.
  const LoraModule* x = net.find("lora_unet_x_embedder_proj");
  ASSERT_TRUE(x->conv);
  EXPECT_EQ(x->adapter->down.sizes(), (std::vector<int64_t>{6, 16, 2, 2}));
  EXPECT_EQ(x->adapter->up.sizes(), (std::vector<int64_t>{mmdit->config().hiddenSize(), 6, 1, 1}));
  // A trained x_embedder LoRA changes the output; the latents' shape passes through.
  torch::NoGradGuard noGrad;
  const torch::Tensor lat = torch::randn({1, 16, 4, 4}), t = torch::tensor({500.0f}), y = torch::randn({1, 32}), ctx = torch::randn({1, 3, 32});
  const torch::Tensor before = mmdit(lat, t, y, ctx);
  x->adapter->up.normal_();
  EXPECT_FALSE(torch::allclose(mmdit(lat, t, y, ctx), before));
  // Without emb_dims none of them, as create_network.
  LoraNetwork plain(LoraNetworkOptions{});
  plain.attach(sd3LoraRule(LoraComponent::Unet), *tinyMmdit());
  EXPECT_FALSE(plain.find("lora_unet_x_embedder_proj"));
  EXPECT_FALSE(plain.find("lora_unet_context_embedder"));
  // The layout lists the Linears chosen (the conv is not a Linear).
  size_t listed = 0;
  for (const LoraModuleShape& m : listLoraModules(sd3LoraRule(LoraComponent::Unet, embDims), linearsOf(*mmdit)))
    listed += sd3EmbeddingPart(m.name).has_value();
  EXPECT_EQ(listed, expected.size() - 1);
}

// lora_sd3's prepare_optimizer_params_with_multiple_te_lrs: text_encoder_lr [CLIP-L, CLIP-G, T5-XXL]:
// the second value (t5xxl_lr here) trains CLIP-G, and T5-XXL unless a third (sd3_t5xxl_lr) is given,
// where networks.lora's SDXL CLIP-G stays at the first.
TEST(Sd3Lora, ClipGAndT5xxlTrainAtTheSecondAndThirdTextEncoderRates) {
  models::ClipTextModel clipL(models::ClipTextConfig::tinySd3ClipL()), clipG(models::ClipTextConfig::tinySd3ClipG());
  models::T5Encoder t5(models::T5EncoderConfig::tiny());
  using Groups = std::map<std::string, std::pair<double, size_t>>;
  auto groupsOf = [&](LoraTargetRule (*rule)(LoraComponent), std::optional<double> third, bool withT5) {
    LoraNetwork net(LoraNetworkOptions{});
    net.attach(rule(LoraComponent::TextEncoder1), *clipL);
    net.attach(rule(LoraComponent::TextEncoder2), *clipG);
    if (withT5) net.attach(rule(LoraComponent::TextEncoder3), *t5);
    Groups out;
    for (const LoraParamGroup& g : net.parameterGroups(1e-5, std::nullopt, 1e-4, 3e-6, third)) out[g.label] = {g.lr, g.params.size()};
    return std::make_tuple(out, net.readsTextEncoderLrAt(1), net.readsTextEncoderLrAt(2));
  };
  auto sd3Rule = [](LoraComponent c) { return sd3LoraRule(c); };
  const auto perClipL = static_cast<size_t>(2 * 6 * models::ClipTextConfig::tinySd3ClipL().layers);  // down and up of 6 Linears a layer
  const auto perClipG = static_cast<size_t>(2 * 6 * models::ClipTextConfig::tinySd3ClipG().layers);
  const auto perT5 = static_cast<size_t>(2 * 7 * models::T5EncoderConfig::tiny().layers);  // q, k, v, o, wi_0, wi_1, wo
  const auto [clips, clipsSecond, clipsThird] = groupsOf(sd3Rule, 2e-6, false);
  EXPECT_EQ(clips.at("textencoder"), std::make_pair(1e-5, perClipL));
  EXPECT_EQ(clips.at("textencoder 2"), std::make_pair(3e-6, perClipG));
  EXPECT_TRUE(clipsSecond);
  EXPECT_FALSE(clipsThird) << "no T5-XXL modules: the third value is not read";
  const auto [withT5, t5Second, t5Third] = groupsOf(sd3Rule, 2e-6, true);
  EXPECT_EQ(withT5.at("textencoder 2"), std::make_pair(3e-6, perClipG));
  EXPECT_EQ(withT5.at("textencoder 3"), std::make_pair(2e-6, perT5));
  EXPECT_TRUE(t5Third);
  const auto [twoValues, twoSecond, twoThird] = groupsOf(sd3Rule, std::nullopt, true);
  EXPECT_EQ(twoValues.at("textencoder 3"), std::make_pair(3e-6, perT5)) << "two values: T5-XXL at the second, as lora_sd3 fills the list";
  const auto [sdxl, sdxlSecond, sdxlThird] = groupsOf(&sdxlLoraRule, 2e-6, false);
  EXPECT_FALSE(sdxl.count("textencoder 2"));
  EXPECT_FALSE(sdxlSecond);
}

TEST(Sd3Lora, EmbDimsAndOtherModulesKeys) {
  EXPECT_NO_THROW(parseNetworkArgs({"emb_dims=[0, 0, 0, 0, 0, 0]"}, "networks.lora_sd3"));
  EXPECT_NE(messageOf([] { parseNetworkArgs({"emb_dims=[4,0,0]"}, "networks.lora_sd3"); }).find("6 dimensions"), std::string::npos);
  EXPECT_NE(messageOf([] { parseNetworkArgs({"emb_dims=[4,0,-1,0,0,0]"}, "networks.lora_sd3"); }).find("negative"), std::string::npos);
  models::Sd3Mmdit mmdit = tinyMmdit();
  LoraNetworkOptions flux;
  flux.args = parseNetworkArgs({"img_attn_dim=8"});
  LoraNetwork fluxArgsNet(flux);
  const std::string msg = messageOf([&] { fluxArgsNet.attach(sd3LoraRule(LoraComponent::Unet), *mmdit); });
  EXPECT_NE(msg.find("img_attn_dim is an argument of networks.lora_flux (FLUX), not of SD 3.x's networks.lora_sd3"), std::string::npos)
      << msg;
  models::SdxlUnet unet(models::SdxlUnetConfig::tiny());
  LoraNetworkOptions sd3;
  sd3.args = parseNetworkArgs({"x_attn_dim=8"});
  LoraNetwork sd3ArgsNet(sd3);
  EXPECT_NE(messageOf([&] { sd3ArgsNet.attach(sdxlLoraRule(LoraComponent::Unet), *unet); }).find("networks.lora_sd3 (SD 3.x)"),
            std::string::npos);
  EXPECT_EQ(loraNetworkModuleNamed("networks.lora_sd3"), LoraNetworkModule::LoraSd3);
  EXPECT_STREQ(loraNetworkModuleName(LoraNetworkModule::LoraSd3), "networks.lora_sd3");
}

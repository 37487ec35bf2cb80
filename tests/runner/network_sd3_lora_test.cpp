// networks.lora_sd3 on the real MMDiT (tiny): the modules and kohya names sd-scripts' create_network
// makes (every Linear of the SingleDiTBlocks, none of the embedders), its type dims and
// train_block_indices, emb_dims, and the keys that belong to another network module.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>
#include <string>
#include <vector>

#include "models/layers/linear.h"
#include "models/sd3/sd3_mmdit.h"
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

TEST(Sd3Lora, EmbDimsAndOtherModulesKeys) {
  EXPECT_NO_THROW(parseNetworkArgs({"emb_dims=[0, 0, 0, 0, 0, 0]"}, "networks.lora_sd3"));
  EXPECT_NE(messageOf([] { parseNetworkArgs({"emb_dims=[4,0,0,0,0,0]"}, "networks.lora_sd3"); }).find("not built yet"), std::string::npos);
  EXPECT_NE(messageOf([] { parseNetworkArgs({"emb_dims=[4,0,0]"}, "networks.lora_sd3"); }).find("6 dimensions"), std::string::npos);
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

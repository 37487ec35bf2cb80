// The full-size SDXL LoRA modules from the models' own layout listings (no weights allocated):
// sd-scripts creates 722 UNet modules and 72 + 192 text encoder modules with default targets.
#include <gtest/gtest.h>

#include <set>

#include "models/text_encoders/clip_text_model.h"
#include "models/unet/sdxl_unet_config.h"
#include "models/unet/sdxl_unet_layout.h"
#include "network/lora_targets.h"

using namespace sinter;
using namespace sinter::network;

namespace {
std::vector<LinearShape> shapes(const std::vector<models::LinearInfo>& infos) {
  std::vector<LinearShape> out;
  for (const auto& i : infos) out.push_back({i.path, i.in, i.out});
  return out;
}
}  // namespace

TEST(LoraLayout, FullSizeSdxlFromTheModelListings) {
  const auto unetAll = models::sdxlUnetLinearLayers(models::SdxlUnetConfig::full());
  const auto unet = listLoraModules(sdxlLoraRule(LoraComponent::Unet), shapes(unetAll));
  EXPECT_EQ(unet.size(), 722u);
  // The targets are exactly the transformer Linears the layout names.
  const auto transformer = models::sdxlUnetTransformerLinearLayers(models::SdxlUnetConfig::full());
  ASSERT_EQ(transformer.size(), unet.size());
  for (size_t i = 0; i < unet.size(); ++i) EXPECT_EQ(unet[i].modulePath, transformer[i].path);

  const auto te1 = listLoraModules(sdxlLoraRule(LoraComponent::TextEncoder1),
                                   shapes(models::clipTextLinearLayers(models::ClipTextConfig::sdxlClipL())));
  const auto te2 = listLoraModules(sdxlLoraRule(LoraComponent::TextEncoder2),
                                   shapes(models::clipTextLinearLayers(models::ClipTextConfig::sdxlOpenClipBigG())));
  EXPECT_EQ(te1.size(), 72u);
  EXPECT_EQ(te2.size(), 192u);
  std::set<std::string> names;
  for (const auto* l : {&unet, &te1, &te2})
    for (const auto& m : *l) names.insert(m.name);
  EXPECT_EQ(names.size(), 986u);
  EXPECT_TRUE(names.count("lora_unet_input_blocks_4_1_transformer_blocks_0_attn1_to_q"));
  EXPECT_TRUE(names.count("lora_unet_output_blocks_2_1_transformer_blocks_9_ff_net_2"));
  EXPECT_TRUE(names.count("lora_te1_text_model_encoder_layers_11_mlp_fc1"));
  EXPECT_TRUE(names.count("lora_te2_text_model_encoder_layers_0_self_attn_out_proj"));
}

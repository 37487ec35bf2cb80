// OneTrainer's SDXL LoRAs (tools/sdxl_lora_layouts.h): their diffusers-named U-Net modules read under
// sd-scripts' names. Every module sd-scripts' SDXL network can target, named as diffusers names it,
// comes back as sd-scripts names it; OneTrainer's own table's block pairs hold; an SD 1.x LoRA
// (the same block names, sd-scripts' own) is left as it is; and the tools read such a file as the
// kohya file it stands for.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "io/safetensors.h"
#include "models/unet/sdxl_unet_layout.h"
#include "network/lora_targets.h"
#include "runner_process.h"
#include "temp_dir.h"
#include "tools/sdxl_lora_layouts.h"

using sinter::network::kohyaLoraName;
using sinter::network::LoraComponent;
using sinter::network::sdDiffusersUnetPath;
using namespace sinter::tools;

namespace {

std::map<std::string, torch::Tensor> lora(const std::vector<std::string>& modules, int64_t rank = 1) {
  std::map<std::string, torch::Tensor> t;
  for (const std::string& m : modules) {
    t[m + ".lora_down.weight"] = torch::randn({rank, 4});
    t[m + ".lora_up.weight"] = torch::randn({4, rank});
    t[m + ".alpha"] = torch::scalar_tensor(static_cast<double>(rank));
  }
  return t;
}

}  // namespace

TEST(SdxlLoraLayouts, EveryModuleSdScriptsTargetsComesBackUnderItsName) {
  // Every Linear of full-size SDXL's U-Net (transformers, ResBlocks' emb_layers, the embeddings) and
  // the conv blocks' convolutions, named as diffusers names them.
  std::map<std::string, std::string> expected;  // diffusers' kohya name -> sd-scripts'
  const std::map<std::string, std::string> outside = {{"time_embed.0", "time_embedding.linear_1"}, {"time_embed.2", "time_embedding.linear_2"},
                                                      {"label_emb.0.0", "add_embedding.linear_1"}, {"label_emb.0.2", "add_embedding.linear_2"}};
  for (const auto& linear : sinter::models::sdxlUnetLinearLayers(sinter::models::SdxlUnetConfig::full())) {
    const std::string diffusers = outside.count(linear.path) ? outside.at(linear.path) : sdDiffusersUnetPath(linear.path, 2);
    expected[kohyaLoraName(LoraComponent::Unet, diffusers)] = kohyaLoraName(LoraComponent::Unet, linear.path);
  }
  // OneTrainer's table (convert_sdxl_lora.py) for the blocks' edges.
  for (const auto& [d, sai] : std::map<std::string, std::string>{
           {"down_blocks_0_downsamplers_0_conv", "input_blocks_3_0_op"}, {"up_blocks_0_upsamplers_0_conv", "output_blocks_2_2_conv"},
           {"up_blocks_1_upsamplers_0_conv", "output_blocks_5_2_conv"}, {"up_blocks_1_resnets_2_conv_shortcut", "output_blocks_5_0_skip_connection"},
           {"mid_block_resnets_1_time_emb_proj", "middle_block_2_emb_layers_1"}, {"down_blocks_1_resnets_0_conv1", "input_blocks_4_0_in_layers_2"},
           {"up_blocks_2_resnets_2_conv2", "output_blocks_8_0_out_layers_3"}, {"conv_in", "input_blocks_0_0"}, {"conv_out", "out_2"},
           {"up_blocks_0_attentions_2_transformer_blocks_9_ff_net_2", "output_blocks_2_1_transformer_blocks_9_ff_net_2"},
           {"down_blocks_2_attentions_1_proj_out", "input_blocks_8_1_proj_out"}})
    expected["lora_unet_" + d] = "lora_unet_" + sai;
  ASSERT_GT(expected.size(), 700u);
  std::vector<std::string> diffusersNames;
  for (const auto& kv : expected) diffusersNames.push_back(kv.first);
  auto tensors = lora(diffusersNames);
  tensors["lora_te2_text_model_encoder_layers_0_mlp_fc1.lora_down.weight"] = torch::randn({1, 4});
  tensors["lora_unet_down_blocks_9_attentions_0_proj_in.lora_down.weight"] = torch::randn({1, 4});  // no such block
  ASSERT_TRUE(hasSdxlDiffusersUnetNames(tensors));
  const ConvertedLora converted = sdxlLoraWithSdScriptsNames(tensors);
  EXPECT_EQ(converted.unconverted, (std::vector<std::string>{"lora_unet_down_blocks_9_attentions_0_proj_in.lora_down.weight"}));
  for (const auto& [d, sai] : expected) {
    ASSERT_TRUE(converted.tensors.count(sai + ".lora_down.weight")) << d << " should be " << sai;
    EXPECT_TRUE(torch::equal(converted.tensors.at(sai + ".lora_up.weight"), tensors.at(d + ".lora_up.weight"))) << d;
    EXPECT_TRUE(converted.tensors.count(sai + ".alpha")) << d;
  }
  EXPECT_TRUE(converted.tensors.count("lora_te2_text_model_encoder_layers_0_mlp_fc1.lora_down.weight"));
}

TEST(SdxlLoraLayouts, SdLorasAndSdScriptsOwnSdxlNamesAreLeftAsTheyAre) {
  // SD 1.x: sd-scripts' own names are diffusers' block names; one transformer block, a 768-wide context.
  auto sd = lora({"lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn1_to_q", "lora_te_text_model_encoder_layers_0_mlp_fc1"});
  sd["lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.lora_down.weight"] = torch::randn({1, 768});
  EXPECT_FALSE(hasSdxlDiffusersUnetNames(sd));
  const auto sdxl = lora({"lora_unet_input_blocks_4_1_transformer_blocks_1_attn1_to_q", "lora_te2_text_model_encoder_layers_0_mlp_fc1"});
  EXPECT_FALSE(hasSdxlDiffusersUnetNames(sdxl));
  // Any of SDXL's marks with diffusers' block names: a second block, the 2048-wide context, add_embedding.
  EXPECT_TRUE(hasSdxlDiffusersUnetNames(lora({"lora_unet_down_blocks_2_attentions_0_transformer_blocks_3_attn1_to_q"})));
  std::map<std::string, torch::Tensor> wide = {
      {"lora_unet_up_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.lora_down.weight", torch::randn({1, 2048})}};
  EXPECT_TRUE(hasSdxlDiffusersUnetNames(wide));
}

TEST(SdxlLoraLayouts, TheToolsReadOneTrainersFileAsTheKohyaFileItStandsFor) {
  sinter::test::TempDir dir;
  torch::manual_seed(4);
  const std::vector<std::string> diffusers = {"lora_unet_down_blocks_1_attentions_0_transformer_blocks_1_attn1_to_q",
                                              "lora_unet_up_blocks_1_resnets_0_time_emb_proj", "lora_te1_text_model_encoder_layers_0_mlp_fc1"};
  const std::vector<std::string> kohya = {"lora_unet_input_blocks_4_1_transformer_blocks_1_attn1_to_q",
                                          "lora_unet_output_blocks_3_0_emb_layers_1", "lora_te1_text_model_encoder_layers_0_mlp_fc1"};
  const auto one = lora(diffusers, 2);
  std::map<std::string, torch::Tensor> same;
  for (size_t i = 0; i < diffusers.size(); ++i)
    for (const char* suffix : {".lora_down.weight", ".lora_up.weight", ".alpha"}) same[kohya[i] + suffix] = one.at(diffusers[i] + suffix);
  const std::string onePath = dir / "onetrainer.safetensors", kohyaPath = dir / "kohya.safetensors", resized = dir / "resized.safetensors",
                    merged = dir / "merged.safetensors";
  sinter::io::writeSafetensors(onePath, {one.begin(), one.end()});
  sinter::io::writeSafetensors(kohyaPath, {same.begin(), same.end()});

  const auto resize = sinter::test::runRunner({"resize_lora", "--model", onePath, "--save_to", resized, "--new_rank", "2"});
  ASSERT_EQ(resize.exitCode, 0) << resize.err;
  EXPECT_NE(resize.err.find("read under sd-scripts' names"), std::string::npos) << resize.err;
  const sinter::io::SafetensorsFile out(resized);
  for (const std::string& m : kohya) EXPECT_TRUE(out.has(m + ".lora_down.weight")) << m;

  // Merged with the kohya file of the same modules: the same names, so the factors add up (merge_lora_models
  // signs the downs by the ratios: 1 and -1 cancel).
  const auto merge = sinter::test::runRunner({"merge_lora", "--models", onePath, kohyaPath, "--ratios", "1", "-1", "--save_to", merged});
  ASSERT_EQ(merge.exitCode, 0) << merge.err;
  const sinter::io::SafetensorsFile m(merged);
  for (const std::string& name : kohya) {
    ASSERT_TRUE(m.has(name + ".lora_down.weight")) << name;
    EXPECT_EQ(m.tensor(name + ".lora_down.weight").abs().max().item<double>(), 0.0) << name;
  }
}

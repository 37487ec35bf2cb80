// SD 1.5 and SD 2.1 LoRA modules: the names and kernels the runner's rule gives the full-size
// models equal the ones sd-scripts' own networks.lora creates (tests/data/sd_lora/*.txt, written by
// tests/gpu/sd_vs_sdscripts.py names from sd-scripts' model_util configs: diffusers' UNet names,
// CLIP under text_model, SD 2.x's text encoder with 23 layers), with and without conv_dim.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "models/text_encoders/clip_text_model.h"
#include "models/checkpoints/sd_checkpoint.h"
#include "network/lora_targets.h"
#include "unet_layer_paths.h"

namespace fs = std::filesystem;
using namespace sinter;
using network::LayerPath;
using network::LoraComponent;
using network::LoraTargetRule;

namespace {

// The modules the network attaches under `rule` (lora_network.cpp's attach): Linears, and 1x1
// convs where the rule selects them, through `select`; the conv blocks' layers with conv_dim.
void listRule(const LoraTargetRule& rule, const std::vector<LayerPath>& layers, bool convDim, std::set<std::string>& out) {
  std::vector<std::string> selectable, all;
  for (const LayerPath& l : layers) {
    all.push_back(l.path);
    if (l.kernel == 0 || (rule.selectsConv1x1 && l.kernel == 1)) selectable.push_back(l.path);
  }
  const std::vector<bool> chosen = rule.select(selectable);
  const std::vector<bool> inConv = convDim && rule.selectInConvBlocks ? rule.selectInConvBlocks(all) : std::vector<bool>(all.size(), false);
  size_t s = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerPath& l = layers[i];
    const bool isSelectable = l.kernel == 0 || (rule.selectsConv1x1 && l.kernel == 1);
    const bool picked = (isSelectable && chosen[s++]) || inConv[i];
    if (!picked || (rule.notInSdScriptsModel && rule.notInSdScriptsModel(l.path))) continue;
    out.insert(network::loraModuleName(rule, l.path) + " " + std::to_string(l.kernel));
  }
}

std::set<std::string> readListing(const fs::path& file) {
  std::ifstream in(file);
  EXPECT_TRUE(in) << file;
  std::set<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.insert(line);
  return lines;
}

}  // namespace

TEST(SdLoraNames, EqualSdScriptsOwnListings) {
  for (const models::SdVersion version : {models::SdVersion::V1, models::SdVersion::V2}) {
    const models::SdCheckpointConfig config = models::SdCheckpointConfig::full(version);
    const bool v2 = version == models::SdVersion::V2;
    for (const bool convDim : {false, true}) {
      const std::string name = std::string(v2 ? "sd21" : "sd15") + (convDim ? "_conv_dim" : "");
      SCOPED_TRACE(name);
      std::set<std::string> ours;
      listRule(network::sdLoraRule(LoraComponent::Unet, config.unet.numResBlocks), test::unetLayerPaths(config.unet), convDim, ours);
      listRule(network::sdLoraRule(LoraComponent::TextEncoder, config.unet.numResBlocks, v2 ? config.text.layers - 1 : 0),
               test::linearsOf(models::clipTextLinearLayers(config.text)), convDim, ours);
      const std::set<std::string> theirs = readListing(fs::path(SINTER_TEST_DATA_DIR) / "sd_lora" / (name + ".txt"));
      std::vector<std::string> onlyOurs, onlyTheirs;
      std::set_difference(ours.begin(), ours.end(), theirs.begin(), theirs.end(), std::back_inserter(onlyOurs));
      std::set_difference(theirs.begin(), theirs.end(), ours.begin(), ours.end(), std::back_inserter(onlyTheirs));
      EXPECT_TRUE(onlyOurs.empty()) << onlyOurs.size() << " not sd-scripts', first " << (onlyOurs.empty() ? "" : onlyOurs.front()) << ", last " << (onlyOurs.empty() ? "" : onlyOurs.back());
      EXPECT_TRUE(onlyTheirs.empty()) << onlyTheirs.size() << " missing, first " << (onlyTheirs.empty() ? "" : onlyTheirs.front());
      EXPECT_EQ(ours.size(), theirs.size());
    }
  }
}

TEST(SdLoraNames, DiffusersPathsOfTheSaiLayout) {
  const auto map = [](const std::string& p) { return network::sdDiffusersUnetPath(p, 2); };
  EXPECT_EQ(map("input_blocks.1.1.proj_in"), "down_blocks.0.attentions.0.proj_in");
  EXPECT_EQ(map("input_blocks.2.1.transformer_blocks.0.attn1.to_q"), "down_blocks.0.attentions.1.transformer_blocks.0.attn1.to_q");
  EXPECT_EQ(map("input_blocks.3.0.op"), "down_blocks.0.downsamplers.0.conv");
  EXPECT_EQ(map("input_blocks.4.0.skip_connection"), "down_blocks.1.resnets.0.conv_shortcut");
  EXPECT_EQ(map("input_blocks.11.0.in_layers.2"), "down_blocks.3.resnets.1.conv1");
  EXPECT_EQ(map("middle_block.0.emb_layers.1"), "mid_block.resnets.0.time_emb_proj");
  EXPECT_EQ(map("middle_block.1.proj_out"), "mid_block.attentions.0.proj_out");
  EXPECT_EQ(map("middle_block.2.out_layers.3"), "mid_block.resnets.1.conv2");
  EXPECT_EQ(map("output_blocks.2.1.conv"), "up_blocks.0.upsamplers.0.conv");  // level 3 has no transformer
  EXPECT_EQ(map("output_blocks.5.2.conv"), "up_blocks.1.upsamplers.0.conv");
  EXPECT_EQ(map("output_blocks.5.1.transformer_blocks.0.ff.net.2"), "up_blocks.1.attentions.2.transformer_blocks.0.ff.net.2");
  EXPECT_EQ(map("output_blocks.11.0.skip_connection"), "up_blocks.3.resnets.2.conv_shortcut");
  EXPECT_EQ(map("time_embed.0"), "time_embed.0");
}

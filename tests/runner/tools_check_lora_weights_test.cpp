// check_lora_weights: what a LoRA or LyCORIS file holds (tools/lora_file_summary.h), and the
// command's output, whose per-tensor lines are sd-scripts' networks/check_lora_weights.py's; the
// family a file is for, from its metadata or its module names (SD 3.x's networks.lora_sd3 among them).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "io/safetensors.h"
#include "runner_process.h"
#include "tools/lora_file_summary.h"

namespace fs = std::filesystem;
using namespace sinter::tools;

namespace {

std::map<std::string, torch::Tensor> mixedFile() {
  torch::manual_seed(2);
  return {{"lora_unet_a.lora_down.weight", torch::randn({6, 20})},
          {"lora_unet_a.lora_up.weight", torch::randn({12, 6})},
          {"lora_unet_a.alpha", torch::tensor(3.0)},
          {"lora_unet_conv.lora_down.weight", torch::randn({4, 4, 3, 3})},
          {"lora_unet_conv.lora_up.weight", torch::randn({8, 4, 1, 1})},
          {"lora_unet_conv.alpha", torch::tensor(3.0)},
          {"lora_unet_conv.dora_scale", torch::randn({8, 1, 1, 1})},
          {"lora_te1_b.hada_w1_a", torch::randn({12, 2})},
          {"lora_te1_b.hada_w1_b", torch::randn({2, 20})},
          {"lora_te1_b.alpha", torch::tensor(1.0)}};
}

}  // namespace

TEST(CheckLoraWeights, TheSummaryNamesAlgorithmsRanksAlphasAndTheModel) {
  const LoraFileSummary s = summarizeLoraFile(mixedFile(), {{"ss_base_model_version", "sdxl_base_v1-0"}});
  EXPECT_EQ(s.modules, 3);
  EXPECT_EQ(s.algorithms, (std::map<std::string, int64_t>{{"LoRA", 1}, {"LoCon (3x3 conv)", 1}, {"LoHa", 1}, {"DoRA scale", 1}}));
  EXPECT_EQ(s.ranks, (std::map<int64_t, int64_t>{{4, 1}, {6, 1}}));
  EXPECT_EQ(s.alphas, (std::map<std::string, int64_t>{{"1.0", 1}, {"3.0", 2}}));
  EXPECT_EQ(s.network, "lycoris.kohya (by its keys; no ss_network_module)");
  EXPECT_EQ(s.model, "sdxl_base_v1-0");
  EXPECT_EQ(s.lines().at(4), "ranks: 4 (1 modules), 6 (1 modules)");
  EXPECT_EQ(s.family, "SDXL (ss_base_model_version = sdxl_base_v1-0)");
  const LoraFileSummary plain = summarizeLoraFile({{"m.lora_down.weight", torch::ones({2, 3})}}, {{"ss_network_module", "networks.lora_flux"}});
  EXPECT_EQ(plain.network, "networks.lora_flux");
  EXPECT_EQ(plain.model, "not in the metadata");
}

TEST(CheckLoraWeights, AnSd3LoraIsNamedByItsMetadataOrItsModuleNames) {
  torch::manual_seed(3);
  const std::map<std::string, torch::Tensor> sd3 = {
      {"lora_unet_joint_blocks_0_x_block_attn_qkv.lora_down.weight", torch::randn({4, 64})},
      {"lora_unet_joint_blocks_0_x_block_attn_qkv.lora_up.weight", torch::randn({192, 4})},
      {"lora_unet_joint_blocks_0_x_block_attn_qkv.alpha", torch::tensor(2.0)},
      {"lora_te2_text_model_encoder_layers_0_self_attn_q_proj.lora_down.weight", torch::randn({4, 32})},
      {"lora_te2_text_model_encoder_layers_0_self_attn_q_proj.lora_up.weight", torch::randn({32, 4})}};
  const LoraFileSummary byNames = summarizeLoraFile(sd3, {});
  EXPECT_EQ(byNames.family, "SD 3.x (its module names (lora_unet_joint_blocks_*))");
  EXPECT_EQ(byNames.network, "networks.lora_sd3 (by its keys; no ss_network_module)");
  EXPECT_EQ(byNames.lines().at(0), "family: " + byNames.family);
  const LoraFileSummary byMetadata =
      summarizeLoraFile(sd3, {{"ss_network_module", "networks.lora_sd3"}, {"ss_base_model_version", "5-large"}});
  EXPECT_EQ(byMetadata.family, "SD 3.x (ss_network_module = networks.lora_sd3)");
  EXPECT_EQ(byMetadata.network, "networks.lora_sd3");
  EXPECT_EQ(byMetadata.model, "5-large");
  // svd_merge_lora writes networks.lora (as svd_merge_lora.py): the architecture tells then.
  EXPECT_EQ(summarizeLoraFile(sd3, {{"ss_network_module", "networks.lora"}, {"modelspec.architecture", "stable-diffusion-3-medium/lora"}}).family,
            "SD 3.x (modelspec.architecture = stable-diffusion-3-medium/lora)");
  EXPECT_EQ(summarizeLoraFile({{"lora_te_text_model_encoder_layers_0_mlp_fc1.lora_down.weight", torch::ones({2, 1024})}}, {}).family,
            "SD 2.x (its module names (lora_te_*, lora_te_* 1024 wide))");
  EXPECT_EQ(summarizeLoraFile({{"m.lora_down.weight", torch::ones({2, 3})}}, {}).family, "not told by its metadata or module names");

  const fs::path dir = fs::temp_directory_path() / ("sinter_check_sd3_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "sd3.safetensors").string();
  sinter::io::writeSafetensors(file, {sd3.begin(), sd3.end()}, {{"ss_network_module", "networks.lora_sd3"}});
  const auto run = sinter::test::runRunner({"check_lora_weights", file});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out.rfind("family: SD 3.x (ss_network_module = networks.lora_sd3)\nnetwork: networks.lora_sd3\n", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("\nlora_unet_joint_blocks_0_x_block_attn_qkv.lora_up.weight,(192-4),"), std::string::npos) << run.out;
  fs::remove_all(dir);
}

TEST(CheckLoraWeights, TheCommandPrintsCheckLoraWeightsPysLines) {
  const fs::path dir = fs::temp_directory_path() / ("sinter_check_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "mixed.safetensors").string();
  const auto tensors = mixedFile();
  sinter::io::writeSafetensors(file, {tensors.begin(), tensors.end()}, {{"ss_network_dim", "6"}, {"ss_num_epochs", "3"}});
  const auto plain = sinter::test::runRunner({"check_lora_weights", file});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_NE(plain.out.find("number of LoRA modules: 4\n"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("\nlora_unet_a.lora_down.weight,(6-20),"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("\nlora_unet_conv.lora_up.weight,(8-4-1-1),"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("metadata: ss_network_dim = 6\n"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("hada_w1_a"), std::string::npos);
  const auto all = sinter::test::runRunner({"networks/check_lora_weights.py", "-s", file});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  EXPECT_NE(all.out.find("number of all modules: 10\n"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("\nlora_unet_a.alpha,(),3,3\n"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("\nlora_unet_conv.dora_scale,(8-1-1-1),"), std::string::npos) << all.out;
  EXPECT_EQ(sinter::test::runRunner({"check_lora_weights", (dir / "missing.safetensors").string()}).exitCode, 2);
  // argparse's prefixes: --show_all is --show_all_keys; an unknown flag is refused.
  EXPECT_EQ(sinter::test::runRunner({"check_lora_weights", file, "--show_all"}).out, all.out);
  EXPECT_EQ(sinter::test::runRunner({"check_lora_weights", file, "--shw"}).exitCode, 2);
  EXPECT_EQ(sinter::test::runRunner({"check_lora_weights"}).exitCode, 2);
  fs::remove_all(dir);
}

// sinter-runner's FLUX tools, run as a process: --print_lora_layout (JSON, no weights allocated),
// --init_checkpoint --model_family flux (files that load back) and --module_outputs on a Chroma file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "models/autoencoders/flux_autoencoder.h"
#include "models/checkpoints/flux_checkpoint.h"
#include "models/checkpoints/flux_random_checkpoint.h"
#include "models/flux/flux_latents.h"

namespace fs = std::filesystem;

namespace {

struct Result {
  int code = -1;
  std::string out, err;
};

// stdout apart from stderr (the log), so the JSON can be parsed.
Result run(const std::vector<std::string>& args, const fs::path& errFile) {
  std::string cmd = std::string("'") + SINTER_RUNNER_BINARY + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " 2>'" + errFile.string() + "'";
  Result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class FluxTools : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("sinter_flux_tools_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

}  // namespace

TEST_F(FluxTools, PrintLoraLayoutListsSdScriptsModules) {
  Result r = run({"--print_lora_layout", "--model_family", "flux", "--network_train_unet_only"}, dir / "err");
  ASSERT_EQ(r.code, 0) << r.out;
  nlohmann::json layout = nlohmann::json::parse(r.out);
  EXPECT_EQ(layout["family"], "flux");
  EXPECT_EQ(layout["model_size"], "full");
  ASSERT_EQ(layout["count"], 304);
  ASSERT_EQ(layout["modules"].size(), 304u);
  EXPECT_EQ(layout["modules"][0]["name"], "lora_unet_double_blocks_0_img_mod_lin");
  EXPECT_EQ(layout["modules"][2]["name"], "lora_unet_double_blocks_0_img_attn_proj");
  EXPECT_EQ(layout["modules"][1]["out"], 9216);  // img_attn.qkv: 3072 -> 3 x 3072
  EXPECT_EQ(layout["modules"][1]["component"], "unet");

  // With the text encoder: CLIP-L's 12 layers x (q, k, v, out, fc1, fc2) first, as lora_te1.
  r = run({"--print_lora_layout", "--model_family", "flux"}, dir / "err");
  ASSERT_EQ(r.code, 0);
  layout = nlohmann::json::parse(r.out);
  EXPECT_EQ(layout["count"], 304 + 72);
  EXPECT_EQ(layout["modules"][0]["name"], "lora_te1_text_model_encoder_layers_0_self_attn_k_proj");
  EXPECT_EQ(layout["modules"][0]["component"], "te1");

  // train_t5xxl: T5-XXL's 24 blocks x (q, k, v, o, wi_0, wi_1, wo) after CLIP-L's, as lora_te3.
  r = run({"--print_lora_layout", "--model_family", "flux", "--network_args", "train_t5xxl=True"}, dir / "err");
  ASSERT_EQ(r.code, 0);
  layout = nlohmann::json::parse(r.out);
  EXPECT_EQ(layout["count"], 304 + 72 + 168);
  EXPECT_EQ(layout["modules"][72]["name"], "lora_te3_encoder_block_0_layer_0_SelfAttention_q");
  EXPECT_EQ(layout["modules"][72]["component"], "te3");

  // SDXL: the 722 U-Net modules of the benchmarks.
  r = run({"--print_lora_layout", "--model_family", "sdxl", "--network_train_unet_only"}, dir / "err");
  ASSERT_EQ(r.code, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["count"], 722);
  // tiny, and bad input.
  r = run({"--print_lora_layout", "--model_family", "flux", "--model_size", "tiny", "--network_train_unet_only"}, dir / "err");
  ASSERT_EQ(r.code, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["count"], 2 * 10 + 2 * 3);
  EXPECT_EQ(run({"--print_lora_layout", "--model_family", "flux", "--model_size", "huge"}, dir / "err").code, 2);
  // train_blocks (network_args) as a run reads it: single blocks only, 38 x 3; SDXL has no such argument.
  r = run({"--print_lora_layout", "--model_family", "flux", "--network_train_unet_only", "--network_args", "train_blocks=single"},
          dir / "err");
  ASSERT_EQ(r.code, 0);
  layout = nlohmann::json::parse(r.out);
  EXPECT_EQ(layout["count"], 38 * 3);
  EXPECT_EQ(layout["modules"][0]["name"], "lora_unet_single_blocks_0_linear1");
  EXPECT_EQ(run({"--print_lora_layout", "--model_family", "flux", "--network_args", "train_blocks=middle"}, dir / "err").code, 2);
  EXPECT_EQ(run({"--print_lora_layout", "--model_family", "sdxl", "--network_args", "train_blocks=single"}, dir / "err").code, 2);
}

// Chroma (model_type chroma): networks.lora_flux's block Linears without the modulation ones (19 x 8
// + 38 x 2), and no CLIP-L modules even with the text encoders (sd-scripts' use_clip_l False).
TEST_F(FluxTools, PrintLoraLayoutOfChroma) {
  const Result r = run({"--print_lora_layout", "--model_family", "flux", "--model_type", "chroma"}, dir / "err");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json layout = nlohmann::json::parse(r.out);
  EXPECT_EQ(layout["count"], 19 * 8 + 38 * 2);
  for (const auto& m : layout["modules"]) {
    EXPECT_EQ(m["component"], "unet") << m["name"];
    EXPECT_EQ(m["name"].get<std::string>().find("mod_lin"), std::string::npos) << m["name"];
  }
  EXPECT_EQ(layout["modules"][0]["name"], "lora_unet_double_blocks_0_img_attn_qkv");
}

TEST_F(FluxTools, InitCheckpointWritesATransformerAndAutoencoderThatLoad) {
  const fs::path transformer = dir / "flux" / "flux1-dev.safetensors";
  Result r = run({"--init_checkpoint", transformer.string(), "--model_family", "flux", "--model_size", "tiny", "--seed", "3"},
                 dir / "err");
  ASSERT_EQ(r.code, 0);
  ASSERT_TRUE(fs::exists(dir / "flux" / "ae.safetensors"));
  const sinter::models::FluxTransformer model = sinter::models::loadFluxTransformer(transformer.string());
  EXPECT_TRUE(model->config().guidanceEmbed);  // dev
  EXPECT_EQ(model->config().hiddenSize, sinter::models::FluxConfig::tiny().hiddenSize);
  const sinter::models::FluxAutoencoder ae = sinter::models::loadFluxAutoencoder((dir / "flux" / "ae.safetensors").string());
  EXPECT_NE(ae.get(), nullptr);
}

// What tests/gpu/flux_modules_vs_sdscripts.py compares with sd-scripts' Chroma: the runner's "chroma"
// output (no y; the guidance and the T5 mask) is the transformer's own, in process.
TEST_F(FluxTools, ModuleOutputsRunAChromaTransformer) {
  using namespace sinter::models;
  const std::string chroma = (dir / "chroma.safetensors").string(), in = (dir / "in.safetensors").string(),
                    out = (dir / "out.safetensors").string();
  writeRandomFluxTransformer(chroma, FluxConfig::tinyChroma(), 5, torch::kFloat32);
  torch::manual_seed(2);
  const std::map<std::string, torch::Tensor> inputs = {
      {"img", packFluxLatents(torch::randn({2, 16, 4, 4}))}, {"img_ids", fluxImageIds(2, 2, 2)},
      {"txt", torch::randn({2, 6, FluxConfig::tinyChroma().contextInDim})}, {"txt_ids", fluxTextIds(2, 6)},
      {"timesteps", torch::tensor({0.7f, 0.2f})}, {"guidance", torch::tensor({0.0f, 0.0f})},
      {"txt_mask", torch::tensor({1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0}).view({2, 6})}};
  sinter::io::writeSafetensors(in, {inputs.begin(), inputs.end()});
  const Result r = run({"--module_outputs", out, "--module_inputs", in, "--model_family", "flux", "--pretrained_model_name_or_path", chroma},
                       dir / "err");
  ASSERT_EQ(r.code, 0);
  FluxTransformer model = loadFluxTransformer(chroma);
  torch::NoGradGuard noGrad;
  const torch::Tensor expected = model(inputs.at("img"), inputs.at("img_ids"), inputs.at("txt"), inputs.at("txt_ids"),
                                       inputs.at("timesteps"), torch::Tensor(), inputs.at("guidance"), inputs.at("txt_mask"));
  EXPECT_TRUE(torch::allclose(sinter::io::SafetensorsFile(out).tensor("chroma"), expected, 1e-5, 1e-6));
}

// extract_lora_from_models / flux_extract_lora (`sinter-runner extract_lora_from_models`): a known
// low-rank delta (a LoRA made as training makes it, merged into the tiny checkpoint by merge_lora)
// is recovered from (base, base + delta): the same modules, each product the LoRA's delta as the
// script's rule factors it; the text encoders are left out when they did not change;
// the metadata is extract_lora_from_models.py's; checkpoints of two families are refused. SD 3.x
// (no sd-scripts script): networks.lora_sd3's default targets, T5-XXL left out as create_network leaves it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "io/safetensors.h"
#include "models/checkpoints/flux_checkpoint.h"
#include "models/checkpoints/flux_random_checkpoint.h"
#include "models/checkpoints/random_checkpoint.h"
#include "models/checkpoints/sd_checkpoint.h"
#include "models/checkpoints/sdxl_checkpoint.h"
#include "network/lora_max_norm.h"
#include "random_lora_network.h"
#include "runner_process.h"
#include "sd3_tool_files.h"
#include "temp_dir.h"
#include "tools/low_rank_factors.h"

namespace fs = std::filesystem;
using sinter::network::LoraComponent;
using sinter::network::LoraNetwork;
using sinter::network::LoraNetworkOptions;

namespace {

using sinter::test::TempDir;

// Every module of `lora` is in the extracted file, and its up·down·alpha/rank is:
//  - the script's rule applied to tuned − base at that module (the weights as the models load them,
//    not through the tool's key placement): truncated SVD, clamped at the quantile;
//  - unclamped, the module's own delta: the low-rank change is recovered.
// `models` pairs each base model the network is attached to with the same model loaded from the tuned file.
void expectRecovered(const LoraNetwork& lora, const std::vector<std::pair<torch::nn::Module*, torch::nn::Module*>>& models,
                     const std::string& extracted, int64_t rank, double clampQuantile) {
  std::map<const void*, torch::Tensor> tunedOf;  // a base weight → the tuned model's weight of the same name
  for (const auto& [base, tuned] : models) {
    auto tunedParams = tuned->named_parameters(true);
    for (const auto& p : base->named_parameters(true)) tunedOf[p.value().unsafeGetTensorImpl()] = tunedParams[p.key()];
  }
  const sinter::io::SafetensorsFile file(extracted);
  std::set<std::string> modules;
  for (const std::string& key : file.keys()) modules.insert(key.substr(0, key.find('.')));
  EXPECT_EQ(modules.size(), lora.modules().size());
  for (const auto& m : lora.modules()) {
    ASSERT_TRUE(modules.count(m.name)) << m.name << " was not extracted";
    const torch::Tensor down = file.tensor(m.name + ".lora_down.weight").to(torch::kDouble);
    const torch::Tensor up = file.tensor(m.name + ".lora_up.weight").to(torch::kDouble);
    EXPECT_EQ(down.size(0), std::min({rank, up.size(0), down.size(1)})) << m.name;
    const double scale = file.tensor(m.name + ".alpha").item<double>() / static_cast<double>(down.size(0));
    EXPECT_DOUBLE_EQ(scale, 1.0);
    const torch::Tensor got = torch::matmul(up.reshape({up.size(0), -1}), down.reshape({down.size(0), -1})) * scale;
    auto product = [](const sinter::tools::LowRankFactors& f) {
      return torch::matmul(f.up.reshape({f.up.size(0), -1}), f.down.reshape({f.down.size(0), -1})).to(torch::kDouble);
    };
    const torch::Tensor& baseWeight = m.linear ? m.linear->weight : m.conv->weight;
    const torch::Tensor diff = (tunedOf.at(baseWeight.unsafeGetTensorImpl()) - baseWeight).detach();
    const torch::Tensor expected = product(sinter::tools::lowRankFactors(diff, rank, clampQuantile));
    EXPECT_LE(((got - expected).abs().max() / expected.abs().max()).item<double>(), 1e-5) << m.name;
    const torch::Tensor known = sinter::network::loraWeightDelta(*m.adapter).detach().to(torch::kDouble).reshape(expected.sizes());
    const torch::Tensor recovered = product(sinter::tools::lowRankFactors(diff, rank, std::nullopt));
    EXPECT_LE(((recovered - known).abs().max() / known.abs().max()).item<double>(), 1e-4) << m.name;
  }
}

}  // namespace

TEST(ExtractLora, SdxlRecoversAKnownLowRankDeltaAtEveryModule) {
  TempDir dir;
  const std::string base = dir / "base.safetensors", tuned = dir / "tuned.safetensors", lora = dir / "lora.safetensors",
                    out = dir / "extracted.safetensors";
  sinter::models::writeRandomSdxlCheckpoint(base, true, 21);
  sinter::models::SdxlCheckpoint models = sinter::models::loadSdxlCheckpoint(base);
  const LoraNetworkOptions options = sinter::test::loraNetworkOptions(2, 1.0, {"conv_dim=2", "conv_alpha=2"});
  LoraNetwork network(options);
  network.attach(sinter::network::sdxlLoraRule(LoraComponent::Unet), *models.unet);
  network.attach(sinter::network::sdxlLoraRule(LoraComponent::TextEncoder1), *models.clipL);
  network.attach(sinter::network::sdxlLoraRule(LoraComponent::TextEncoder2), *models.bigG);
  sinter::test::randomizeLoraNetwork(network, 5);
  sinter::test::saveLoraNetwork(network, lora);
  ASSERT_EQ(sinter::test::runRunner({"merge_lora", "--sd_model", base, "--models", lora, "--ratios", "1", "--save_to", tuned}).exitCode, 0);

  const auto run = sinter::test::runRunner({"networks/extract_lora_from_models.py", "--sdxl", "--model_org", base, "--model_tuned",
                                            tuned, "--save_to", out, "--dim", "2", "--conv_dim", "2"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  sinter::models::SdxlCheckpoint merged = sinter::models::loadSdxlCheckpoint(tuned);
  expectRecovered(network, {{models.unet.get(), merged.unet.get()}, {models.clipL.get(), merged.clipL.get()},
                            {models.bigG.get(), merged.bigG.get()}}, out, 2, 0.99);
  const sinter::io::SafetensorsFile file(out);
  EXPECT_EQ(file.metadata().at("ss_network_module"), "networks.lora");
  EXPECT_EQ(file.metadata().at("ss_base_model_version"), "sdxl_base_v1-0");
  EXPECT_EQ(file.metadata().at("ss_network_dim"), "2");
  EXPECT_EQ(file.metadata().at("ss_network_alpha"), "2.0");
  EXPECT_EQ(file.metadata().at("ss_network_args"), "{\"conv_dim\": \"2\", \"conv_alpha\": \"2.0\"}");
  EXPECT_EQ(file.metadata().at("modelspec.architecture"), "stable-diffusion-xl-v1-base/lora");
}

TEST(ExtractLora, UnchangedTextEncodersAreLeftOutAndSd2UsesItsNames) {
  TempDir dir;
  const std::string base = dir / "base.safetensors", tuned = dir / "tuned.safetensors", lora = dir / "lora.safetensors",
                    out = dir / "extracted.safetensors";
  sinter::models::writeRandomSdCheckpoint(base, sinter::models::SdVersion::V2, true, 22);
  sinter::models::SdCheckpoint models = sinter::models::loadSdCheckpoint(base);
  const LoraNetworkOptions options = sinter::test::loraNetworkOptions(3, 3.0);
  LoraNetwork network(options);
  network.attach(sinter::network::sdLoraRule(LoraComponent::Unet, models.config.unet.numResBlocks), *models.unet);
  sinter::test::randomizeLoraNetwork(network, 6);
  sinter::test::saveLoraNetwork(network, lora);
  ASSERT_EQ(sinter::test::runRunner({"merge_lora", "--sd_model", base, "--models", lora, "--ratios", "1", "--save_to", tuned}).exitCode, 0);
  const auto run = sinter::test::runRunner({"extract_lora_from_models", "--model_org", base, "--model_tuned", tuned, "--save_to", out,
                                            "--dim", "3", "--clamp_quantile", "1", "--save_precision", "fp16"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.err.find("Text encoder is same"), std::string::npos) << run.err;
  // fp16: the products agree to fp16's rounding.
  const sinter::io::SafetensorsFile file(out);
  for (const std::string& key : file.keys()) {
    EXPECT_EQ(key.rfind("lora_unet_", 0), 0u) << key;
    EXPECT_EQ(file.info(key).dtype, "F16") << key;
  }
  EXPECT_EQ(file.metadata().at("ss_v2"), "True");
  EXPECT_EQ(file.metadata().at("ss_base_model_version"), "sd_v2_v");
  EXPECT_EQ(file.metadata().at("modelspec.implementation"), "diffusers");
  std::set<std::string> modules;
  for (const std::string& key : file.keys()) modules.insert(key.substr(0, key.find('.')));
  EXPECT_EQ(modules.size(), network.modules().size());
  for (const auto& m : network.modules()) EXPECT_TRUE(modules.count(m.name)) << m.name;
}

TEST(ExtractLora, FluxTransformerAndRefusalOfTwoFamilies) {
  TempDir dir;
  const std::string base = dir / "flux.safetensors", tuned = dir / "tuned.safetensors", lora = dir / "lora.safetensors",
                    out = dir / "extracted.safetensors", sdxl = dir / "sdxl.safetensors";
  sinter::models::writeRandomFluxTransformer(base, true, true, 23);
  sinter::models::FluxTransformer flux = sinter::models::loadFluxTransformer(base);
  const LoraNetworkOptions options = sinter::test::loraNetworkOptions(2, 2.0);
  LoraNetwork network(options);
  network.attach(sinter::network::fluxLoraRule(LoraComponent::Unet), *flux);
  sinter::test::randomizeLoraNetwork(network, 7);
  sinter::test::saveLoraNetwork(network, lora);
  ASSERT_EQ(sinter::test::runRunner({"flux_merge_lora", "--flux_model", base, "--models", lora, "--ratios", "1", "--save_to", tuned})
                .exitCode,
            0);
  const auto run = sinter::test::runRunner({"flux_extract_lora.py", "--model_org", base, "--model_tuned", tuned, "--save_to", out,
                                            "--dim", "2"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  sinter::models::FluxTransformer merged = sinter::models::loadFluxTransformer(tuned);
  expectRecovered(network, {{flux.get(), merged.get()}}, out, 2, 0.99);
  EXPECT_EQ(sinter::io::SafetensorsFile(out).metadata().at("ss_network_module"), "networks.lora_flux");
  EXPECT_EQ(sinter::io::SafetensorsFile(out).metadata().at("ss_base_model_version"), "flux1");

  sinter::models::writeRandomSdxlCheckpoint(sdxl, true, 1);
  fs::remove(out);
  const auto refused = sinter::test::runRunner({"extract_lora_from_models", "--model_org", sdxl, "--model_tuned", tuned, "--save_to", out});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("of one model"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(ExtractLora, Sd3RecoversAKnownLowRankDeltaAtLoraSd3sModulesAndLeavesT5xxlOut) {
  TempDir dir;
  const std::string ckpt = dir / "sd3.safetensors", base = dir / "base.safetensors", tuned = dir / "tuned.safetensors",
                    lora = dir / "lora.safetensors", t5Lora = dir / "t5_lora.safetensors", out = dir / "extracted.safetensors";
  const std::string t5 = sinter::test::writeTinySd3Checkpoint(ckpt, 41);
  // The _incl_clips_t5xxl layout: T5-XXL inside the checkpoint too.
  {
    const sinter::io::SafetensorsFile in(ckpt), t5File(t5);
    std::vector<std::pair<std::string, torch::Tensor>> tensors;
    for (const std::string& key : in.keys()) tensors.emplace_back(key, in.tensor(key));
    for (const std::string& key : t5File.keys()) tensors.emplace_back(sinter::models::kSd3T5xxlPrefix + key, t5File.tensor(key));
    sinter::io::writeSafetensors(base, tensors);
  }
  sinter::test::Sd3ToolModels models = sinter::test::loadSd3ToolModels(base);
  models.t5 = sinter::models::loadT5Encoder(sinter::io::SafetensorsFile(base), sinter::models::kSd3T5xxlPrefix);
  // The known delta: networks.lora_sd3's default modules (joint blocks, CLIP-L, CLIP-G); T5-XXL changes too, by a LoRA of its own.
  const LoraNetworkOptions options = sinter::test::sd3LoraOptions(2, 1.0);
  LoraNetwork network(options);
  sinter::test::Sd3ToolModels withoutT5{models.mmdit, models.clipL, models.clipG};
  sinter::test::attachSd3Lora(network, options, withoutT5, true);
  sinter::test::randomizeLoraNetwork(network, 5);
  sinter::test::saveSd3LoraNetwork(network, lora);
  LoraNetwork t5Network(options);
  t5Network.attach(sinter::network::sd3LoraRule(LoraComponent::TextEncoder3), *models.t5);
  sinter::test::randomizeLoraNetwork(t5Network, 6);
  sinter::test::saveSd3LoraNetwork(t5Network, t5Lora);
  ASSERT_EQ(sinter::test::runRunner({"merge_lora", "--sd_model", base, "--models", lora, t5Lora, "--ratios", "1", "1", "--save_to", tuned})
                .exitCode,
            0);

  const auto run = sinter::test::runRunner({"extract_lora_from_models", "--model_org", base, "--model_tuned", tuned, "--save_to", out,
                                            "--dim", "2", "--conv_dim", "2"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  sinter::test::Sd3ToolModels merged = sinter::test::loadSd3ToolModels(tuned);
  expectRecovered(network, {{models.mmdit.get(), merged.mmdit.get()}, {models.clipL.get(), merged.clipL.get()},
                            {models.clipG.get(), merged.clipG.get()}}, out, 2, 0.99);
  const sinter::io::SafetensorsFile file(out);
  for (const std::string& key : file.keys()) EXPECT_NE(key.rfind("lora_te3_", 0), 0u) << key;
  EXPECT_EQ(file.metadata().at("ss_network_module"), "networks.lora_sd3");
  EXPECT_EQ(file.metadata().at("ss_base_model_version"), "5-medium");
  EXPECT_EQ(file.metadata().at("ss_v2"), "False");
  EXPECT_EQ(file.metadata().at("modelspec.architecture"), "stable-diffusion-3-5-medium/lora");
  EXPECT_EQ(file.metadata().count("modelspec.prediction_type"), 0u);
}

// convert_flux_lora (tools/flux_lora_layouts.h and `sinter-runner convert_flux_lora`): a FLUX LoRA made
// as training makes it (networks.lora_flux names on the tiny transformer) converted to ai-toolkit's
// and OneTrainer's layouts and back keeps every module's weight delta; ai-toolkit's fused-module rule
// is convert_flux_lora.py's (downs stacked, ups block-diagonal, alpha the summed rank); and
// flux_merge_lora reads the other layouts as sd-scripts' own, merging the same weights.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "io/safetensors.h"
#include "models/checkpoints/flux_checkpoint.h"
#include "models/checkpoints/flux_random_checkpoint.h"
#include "random_lora_network.h"
#include "runner_process.h"
#include "temp_dir.h"
#include "tools/flux_lora_layouts.h"

using namespace sinter::tools;
using sinter::network::LoraComponent;
using sinter::network::LoraNetworkOptions;

namespace {

// Each kohya module's delta, alpha/rank · up·down, in float64.
std::map<std::string, torch::Tensor> kohyaDeltas(const std::map<std::string, torch::Tensor>& t) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [key, down] : t) {
    static const std::string suffix = ".lora_down.weight";
    if (key.size() <= suffix.size() || key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string m = key.substr(0, key.size() - suffix.size());
    const double rank = static_cast<double>(down.size(0));
    const double scale = t.count(m + ".alpha") ? t.at(m + ".alpha").item<double>() / rank : 1.0;
    out[m] = torch::matmul(t.at(m + ".lora_up.weight").to(torch::kDouble), down.to(torch::kDouble)) * scale;
  }
  return out;
}

std::map<std::string, torch::Tensor> tinyFluxLora(const std::string& flux) {
  sinter::models::FluxTransformer model = sinter::models::loadFluxTransformer(flux);
  const LoraNetworkOptions options = sinter::test::loraNetworkOptions(4, 2.0);
  sinter::network::LoraNetwork network(options);
  network.attach(sinter::network::fluxLoraRule(LoraComponent::Unet), *model);
  sinter::test::randomizeLoraNetwork(network, 9);
  const auto state = network.stateDict(torch::kFloat32);
  return {state.begin(), state.end()};
}

}  // namespace

TEST(ConvertFluxLora, EveryLayoutRoundTripKeepsEachModulesDelta) {
  sinter::test::TempDir dir;
  const std::string flux = dir / "flux.safetensors";
  sinter::models::writeRandomFluxTransformer(flux, true, true, 2);
  const auto kohya = tinyFluxLora(flux);
  const auto original = kohyaDeltas(kohya);
  for (FluxLoraLayout layout : {FluxLoraLayout::Diffusers, FluxLoraLayout::OneTrainer}) {
    const ConvertedLora other = convertFluxLora(kohya, FluxLoraLayout::Kohya, layout);
    EXPECT_TRUE(other.unconverted.empty());
    EXPECT_EQ(detectOtherFluxLoraLayout(other.tensors), layout);
    const ConvertedLora back = convertFluxLora(other.tensors, layout, FluxLoraLayout::Kohya);
    EXPECT_TRUE(back.unconverted.empty());
    const auto deltas = kohyaDeltas(back.tensors);
    ASSERT_EQ(deltas.size(), original.size()) << fluxLoraLayoutName(layout);
    for (const auto& [m, delta] : original)
      EXPECT_LE(((deltas.at(m) - delta).abs().max() / delta.abs().max()).item<double>(), 1e-6) << m << " via " << fluxLoraLayoutName(layout);
  }
  // ai-toolkit: q, k, v separate, with lora_A/lora_B and no alpha (the scale split into the factors).
  const ConvertedLora ait = convertFluxLora(kohya, FluxLoraLayout::Kohya, FluxLoraLayout::Diffusers);
  EXPECT_TRUE(ait.tensors.count("transformer.transformer_blocks.0.attn.to_k.lora_A.weight"));
  EXPECT_TRUE(ait.tensors.count("transformer.single_transformer_blocks.0.proj_mlp.lora_B.weight"));
  for (const auto& kv : ait.tensors) EXPECT_EQ(kv.first.find(".alpha"), std::string::npos) << kv.first;
}

TEST(ConvertFluxLora, AiToolkitsSeparateModulesFuseAsConvertFluxLoraPyFusesThem) {
  torch::manual_seed(5);
  const torch::Tensor aq = torch::randn({2, 8}), ak = torch::randn({2, 8}), av = torch::randn({2, 8});
  const torch::Tensor bq = torch::randn({8, 2}), bk = torch::randn({8, 2}), bv = torch::randn({8, 2});
  const std::string p = "transformer.transformer_blocks.0.attn.";
  const std::map<std::string, torch::Tensor> ait = {
      {p + "to_q.lora_A.weight", aq}, {p + "to_q.lora_B.weight", bq}, {p + "to_k.lora_A.weight", ak},
      {p + "to_k.lora_B.weight", bk}, {p + "to_v.lora_A.weight", av}, {p + "to_v.lora_B.weight", bv},
      {"transformer.unknown.lora_A.weight", torch::randn({2, 3})}};
  const ConvertedLora kohya = convertFluxLora(ait, FluxLoraLayout::Diffusers, FluxLoraLayout::Kohya);
  const std::string m = "lora_unet_double_blocks_0_img_attn_qkv";
  EXPECT_TRUE(torch::equal(kohya.tensors.at(m + ".lora_down.weight"), torch::cat({aq, ak, av}, 0)));
  const torch::Tensor up = kohya.tensors.at(m + ".lora_up.weight");
  EXPECT_EQ(up.sizes(), (std::vector<int64_t>{24, 6}));
  EXPECT_TRUE(torch::equal(up.narrow(0, 8, 8).narrow(1, 2, 2), bk));
  EXPECT_EQ(up.narrow(0, 8, 8).narrow(1, 0, 2).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(kohya.tensors.at(m + ".alpha").item<double>(), 6.0);
  EXPECT_EQ(kohya.unconverted, (std::vector<std::string>{"transformer.unknown.lora_A.weight"}));
  // Back: block-diagonal, so each part keeps its own rank (convert_flux_lora.py's sparse case).
  const ConvertedLora again = convertFluxLora(kohya.tensors, FluxLoraLayout::Kohya, FluxLoraLayout::Diffusers);
  EXPECT_TRUE(torch::allclose(again.tensors.at(p + "to_v.lora_A.weight"), av));
  EXPECT_TRUE(torch::allclose(again.tensors.at(p + "to_v.lora_B.weight"), bv));
}

TEST(ConvertFluxLora, TheCommandAndMergeReadOtherTrainersLayouts) {
  sinter::test::TempDir dir;
  const std::string flux = dir / "flux.safetensors", kohya = dir / "kohya.safetensors", ait = dir / "ait.safetensors",
                    one = dir / "onetrainer.safetensors";
  sinter::models::writeRandomFluxTransformer(flux, true, true, 3);
  const auto lora = tinyFluxLora(flux);
  sinter::io::writeSafetensors(kohya, {lora.begin(), lora.end()}, {{"ss_network_module", "networks.lora_flux"}});
  const auto toAit = sinter::test::runRunner({"networks/convert_flux_lora.py", "--src", "sd-scripts", "--dst", "ai-toolkit",
                                              "--src_path", kohya, "--dst_path", ait});
  ASSERT_EQ(toAit.exitCode, 0) << toAit.err;
  EXPECT_EQ(sinter::io::SafetensorsFile(ait).metadata().at("ss_network_module"), "networks.lora_flux");
  ASSERT_EQ(sinter::test::runRunner({"convert_flux_lora", "--src", "sd-scripts", "--dst", "onetrainer", "--src_path", kohya,
                                     "--dst_path", one})
                .exitCode,
            0);
  // The source layout is checked: this file is not ai-toolkit's.
  const auto wrong = sinter::test::runRunner({"convert_flux_lora", "--src_path", kohya, "--dst_path", dir / "x.safetensors"});
  EXPECT_EQ(wrong.exitCode, 2);
  EXPECT_NE(wrong.err.find("sd-scripts's layout"), std::string::npos) << wrong.err;

  // flux_merge_lora reads each layout as sd-scripts': the same merged weights.
  std::map<std::string, torch::Tensor> merged[3];
  const std::string inputs[3] = {kohya, ait, one};
  for (int i = 0; i < 3; ++i) {
    const std::string out = dir / ("merged" + std::to_string(i) + ".safetensors");
    const auto run = sinter::test::runRunner({"flux_merge_lora", "--flux_model", flux, "--models", inputs[i], "--ratios", "0.7",
                                              "--save_to", out});
    ASSERT_EQ(run.exitCode, 0) << run.err;
    if (i > 0) EXPECT_NE(run.err.find("read as sd-scripts'"), std::string::npos) << run.err;
    const sinter::io::SafetensorsFile file(out);
    for (const std::string& key : file.keys()) merged[i][key] = file.tensor(key);
  }
  for (int i = 1; i < 3; ++i)
    for (const auto& [key, value] : merged[0])
      EXPECT_TRUE(torch::allclose(merged[i].at(key), value, 1e-5, 1e-6)) << key << " from " << inputs[i];
}

TEST(ConvertFluxLora, TextEncoderModulesAreRenamedInEveryLayout) {
  torch::manual_seed(6);
  const std::string clip = "lora_te1_text_model_encoder_layers_0_self_attn_q_proj", t5 = "lora_te3_encoder_block_1_layer_1_DenseReluDense_wi_0",
                    unet = "lora_unet_double_blocks_0_img_mlp_2";
  std::map<std::string, torch::Tensor> kohya;
  for (const auto& [m, alpha] : std::map<std::string, double>{{clip, 1.0}, {t5, 4.0}, {unet, 2.0}}) {
    kohya[m + ".lora_down.weight"] = torch::randn({2, 8});
    kohya[m + ".lora_up.weight"] = torch::randn({8, 2});
    kohya[m + ".alpha"] = torch::scalar_tensor(alpha);
  }
  const auto original = kohyaDeltas(kohya);
  const ConvertedLora ait = convertFluxLora(kohya, FluxLoraLayout::Kohya, FluxLoraLayout::Diffusers);
  EXPECT_TRUE(ait.unconverted.empty());
  EXPECT_TRUE(ait.tensors.count("text_encoder.text_model.encoder.layers.0.self_attn.q_proj.lora_A.weight"));
  EXPECT_TRUE(ait.tensors.count("text_encoder_2.encoder.block.1.layer.1.DenseReluDense.wi_0.lora_B.weight"));
  const ConvertedLora one = convertFluxLora(kohya, FluxLoraLayout::Kohya, FluxLoraLayout::OneTrainer);
  EXPECT_TRUE(one.unconverted.empty());
  EXPECT_TRUE(one.tensors.count("lora_te1_text_model_encoder_layers_0_self_attn_q_proj.alpha"));
  EXPECT_TRUE(one.tensors.count("lora_te2_encoder_block_1_layer_1_DenseReluDense_wi_0.lora_down.weight"));
  for (const ConvertedLora* other : {&ait, &one}) {
    const ConvertedLora back = convertFluxLora(other->tensors, *detectOtherFluxLoraLayout(other->tensors), FluxLoraLayout::Kohya);
    EXPECT_TRUE(back.unconverted.empty());
    const auto deltas = kohyaDeltas(back.tensors);
    ASSERT_EQ(deltas.size(), original.size());
    for (const auto& [m, delta] : original) EXPECT_TRUE(torch::allclose(deltas.at(m), delta, 1e-6, 1e-9)) << m;
  }
  // A text-encoder key of no CLIP-L / T5 Linear is left out, named.
  std::map<std::string, torch::Tensor> odd = ait.tensors;
  odd["text_encoder.text_model.embeddings.token_embedding.lora_A.weight"] = torch::randn({2, 8});
  EXPECT_EQ(convertFluxLora(odd, FluxLoraLayout::Diffusers, FluxLoraLayout::Kohya).unconverted,
            (std::vector<std::string>{"text_encoder.text_model.embeddings.token_embedding.lora_A.weight"}));
}

// merge_lora (tools/lora_merge.h and `sinter-runner merge_lora`): a LoRA made as training makes it
// (the network attached to the tiny models by the family's rules, its factors filled at random)
// merged into the checkpoint it was made for; the merged file, loaded back as models, must hold
// base + ratio · delta for every module the network has, and every other tensor unchanged. This
// ties the tool's key-by-key placement to the training's own module naming, which is independent
// of it. Also: LyCORIS modules by their formulas, LoRAs merged into one LoRA as sd-scripts sums
// them, and the refusals.
#include <gtest/gtest.h>
#include <unistd.h>

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
#include "models/checkpoints/text_encoder_random_checkpoint.h"
#include "network/lora_max_norm.h"
#include "network/lora_network.h"
#include "random_lora_network.h"
#include "runner_process.h"
#include "sd3_tool_files.h"
#include "temp_dir.h"
#include "tools/lora_merge.h"

namespace fs = std::filesystem;
using sinter::network::LoraComponent;
using sinter::network::LoraNetwork;
using sinter::network::LoraNetworkOptions;

namespace {

using sinter::test::TempDir;

using sinter::test::randomizeLoraNetwork;
using sinter::test::saveLoraNetwork;

// The weight the module's adapter adds at multiplier 1 (its own formula, in float64).
torch::Tensor delta(const sinter::network::LoraModule& m) {
  const torch::Tensor base = (m.linear ? m.linear->weight : m.conv->weight).detach();
  if (m.adapter) {
    sinter::models::LoraAdapter a = *m.adapter;
    a.down = a.down.to(torch::kDouble);
    a.up = a.up.to(torch::kDouble);
    return sinter::network::loraWeightDelta(a).reshape(base.sizes());
  }
  sinter::models::LycorisTensors t = m.lycoris->tensors;
  for (auto& [name, tensor] : t.byName)
    if (tensor.is_floating_point()) tensor = tensor.to(torch::kDouble);
  return sinter::models::lycorisDelta(m.lycoris->algo, m.lycoris->shape, t, m.lycoris->scale, base.to(torch::kDouble));
}

// Every module of the networks: the merged model's weight at the module's path against base +
// Σ ratio · delta; and how many parameters the merge changed must be how many modules there are.
void expectMerged(torch::nn::Module& base, torch::nn::Module& merged, const std::vector<std::pair<const LoraNetwork*, double>>& loras,
                  size_t* modulesChecked) {
  auto mergedParams = merged.named_parameters(true);
  std::set<const void*> ofBase;  // the modules attached to this model, not to another of the checkpoint
  for (const auto& p : base.named_parameters(true)) ofBase.insert(p.value().unsafeGetTensorImpl());
  std::map<std::string, torch::Tensor> expected;
  for (const auto& [network, ratio] : loras) {
    for (const auto& m : network->modules()) {
      const torch::Tensor& weight = m.linear ? m.linear->weight : m.conv->weight;
      if (!ofBase.count(weight.unsafeGetTensorImpl())) continue;
      const torch::Tensor w = weight.detach().to(torch::kDouble);
      auto [it, fresh] = expected.emplace(m.modulePath + ".weight", w);
      if (m.lycoris && m.lycoris->doraWd())  // DoRA: the decomposition's change at the ratio as its multiplier
        it->second = it->second + sinter::models::lycorisDecomposedDelta(w, delta(m), m.lycoris->tensors.at("dora_scale").to(torch::kDouble), ratio);
      else
        it->second = it->second + ratio * delta(m);
      // LyCORIS full trains the bias too (saved as diff_b): base + ratio · (trained − base).
      if (m.lycoris && m.lycoris->algo == sinter::models::LycorisAlgo::Full && m.lycoris->tensors.has("bias")) {
        const torch::Tensor baseBias = (m.linear ? m.linear->bias : m.conv->bias).detach().to(torch::kDouble);
        const torch::Tensor trained = m.lycoris->tensors.at("bias").detach().to(torch::kDouble);
        expected[m.modulePath + ".bias"] = baseBias + ratio * (trained - baseBias);
      }
    }
  }
  for (const auto& [key, value] : expected) {
    ASSERT_TRUE(mergedParams.contains(key)) << key;
    const torch::Tensor got = mergedParams[key].detach().to(torch::kDouble);
    const double scale = value.abs().max().item<double>();
    EXPECT_LE((got - value).abs().max().item<double>(), 1e-5 * scale) << key;
  }
  // Everything else is the base's, to the bit.
  for (const auto& p : base.named_parameters(true)) {
    if (expected.count(p.key())) continue;
    EXPECT_TRUE(torch::equal(p.value(), mergedParams[p.key()])) << p.key() << " changed";
  }
  for (const auto& kv : expected) *modulesChecked += kv.first.size() > 7 && kv.first.compare(kv.first.size() - 7, 7, ".weight") == 0;
}

}  // namespace

TEST(MergeLoraIntoCheckpoint, SdxlEveryModuleOfTwoLorasIsBasePlusItsScaledDelta) {
  TempDir dir;
  const std::string ckpt = dir / "base.safetensors", a = dir / "a.safetensors", b = dir / "b.safetensors",
                    out = dir / "merged.safetensors";
  sinter::models::writeRandomSdxlCheckpoint(ckpt, true, 5);
  sinter::models::SdxlCheckpoint base = sinter::models::loadSdxlCheckpoint(ckpt);

  // A: the default targets of all three models; B: conv_dim too (the ResBlocks' 3x3 convolutions).
  const LoraNetworkOptions optionsA = sinter::test::loraNetworkOptions(4, 2.0);
  LoraNetwork loraA(optionsA);
  loraA.attach(sinter::network::sdxlLoraRule(LoraComponent::Unet), *base.unet);
  loraA.attach(sinter::network::sdxlLoraRule(LoraComponent::TextEncoder1), *base.clipL);
  loraA.attach(sinter::network::sdxlLoraRule(LoraComponent::TextEncoder2), *base.bigG);
  randomizeLoraNetwork(loraA, 1);
  saveLoraNetwork(loraA, a);
  const LoraNetworkOptions optionsB = sinter::test::loraNetworkOptions(3, 3.0, {"conv_dim=2", "conv_alpha=1"});
  LoraNetwork loraB(optionsB);
  loraB.attach(sinter::network::sdxlLoraRule(LoraComponent::Unet), *base.unet);
  randomizeLoraNetwork(loraB, 2);
  saveLoraNetwork(loraB, b);

  const auto run = sinter::test::runRunner({"sdxl_merge_lora.py", "--sd_model", ckpt, "--models", a, b, "--ratios", "0.7", "-0.4",
                                            "--save_to", out});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  sinter::models::SdxlCheckpoint merged = sinter::models::loadSdxlCheckpoint(out);
  size_t checked = 0;
  expectMerged(*base.unet, *merged.unet, {{&loraA, 0.7}, {&loraB, -0.4}}, &checked);
  expectMerged(*base.clipL, *merged.clipL, {{&loraA, 0.7}, {&loraB, -0.4}}, &checked);
  expectMerged(*base.bigG, *merged.bigG, {{&loraA, 0.7}, {&loraB, -0.4}}, &checked);
  EXPECT_GT(checked, loraA.modules().size());

  // The file keeps the checkpoint's keys (the VAE's too), in float32 (--precision float, no
  // --save_precision), with sdxl_merge_lora.py's modelspec.
  const sinter::io::SafetensorsFile in(ckpt), file(out);
  EXPECT_EQ(file.keys(), in.keys());
  EXPECT_TRUE(torch::equal(file.tensor("first_stage_model.decoder.conv_in.weight"), in.tensor("first_stage_model.decoder.conv_in.weight")));
  EXPECT_EQ(file.metadata().at("modelspec.architecture"), "stable-diffusion-xl-v1-base");
  EXPECT_EQ(file.metadata().at("modelspec.title"), "merged");
  EXPECT_EQ(file.metadata().at("modelspec.merged_from"), "Sinter random SDXL checkpoint, a, b");  // its modelspec.title, then file names

  // --save_precision writes every floating tensor in it.
  const auto half = sinter::test::runRunner({"merge_lora", "--sd_model", ckpt, "--models", a, "--ratios", "1", "--save_to", out,
                                             "--save_precision", "bf16", "--no_metadata"});
  ASSERT_EQ(half.exitCode, 0) << half.err;
  const sinter::io::SafetensorsFile bf16(out);
  for (const std::string& key : bf16.keys()) EXPECT_EQ(bf16.info(key).dtype, "BF16") << key;
  EXPECT_EQ(bf16.metadata().count("modelspec.architecture"), 0u);
}

TEST(MergeLoraIntoCheckpoint, Sd2DiffusersNamesOpenClipRowsAndAConvLora) {
  TempDir dir;
  const std::string ckpt = dir / "sd2.safetensors", lora = dir / "lora.safetensors", out = dir / "merged.safetensors";
  sinter::models::writeRandomSdCheckpoint(ckpt, sinter::models::SdVersion::V2, true, 7);
  sinter::models::SdCheckpoint base = sinter::models::loadSdCheckpoint(ckpt);
  const int64_t resBlocks = base.config.unet.numResBlocks;
  const LoraNetworkOptions options = sinter::test::loraNetworkOptions(4, 4.0, {"conv_dim=2"});
  LoraNetwork network(options);
  network.attach(sinter::network::sdLoraRule(LoraComponent::Unet, resBlocks), *base.unet);
  network.attach(sinter::network::sdLoraRule(LoraComponent::TextEncoder, resBlocks, base.config.text.layers - 1), base.textEncoder());
  randomizeLoraNetwork(network, 3);
  saveLoraNetwork(network, lora);
  const auto run = sinter::test::runRunner({"merge_lora", "--v2", "--sd_model", ckpt, "--models", lora, "--ratios", "1.25",
                                            "--save_to", out});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  sinter::models::SdCheckpoint merged = sinter::models::loadSdCheckpoint(out);
  size_t checked = 0;
  expectMerged(*base.unet, *merged.unet, {{&network, 1.25}}, &checked);
  expectMerged(base.textEncoder(), merged.textEncoder(), {{&network, 1.25}}, &checked);
  EXPECT_EQ(checked, network.modules().size());
  EXPECT_EQ(sinter::io::SafetensorsFile(out).metadata().at("modelspec.prediction_type"), "v");
}

TEST(MergeLoraIntoCheckpoint, LycorisLoHaAndLoKrByTheirFormulas) {
  TempDir dir;
  const std::string ckpt = dir / "base.safetensors", out = dir / "merged.safetensors";
  sinter::models::writeRandomSdxlCheckpoint(ckpt, true, 9);
  sinter::models::SdxlCheckpoint base = sinter::models::loadSdxlCheckpoint(ckpt);
  for (const char* algo : {"loha", "lokr"}) {
    const LoraNetworkOptions options = sinter::test::loraNetworkOptions(4, 2.0, {std::string("algo=") + algo, "conv_dim=2"}, "lycoris.kohya");
    LoraNetwork network(options);
    network.attach(sinter::network::sdxlLoraRule(LoraComponent::Unet), *base.unet);
    network.attach(sinter::network::sdxlLoraRule(LoraComponent::TextEncoder2), *base.bigG);
    randomizeLoraNetwork(network, 4);
    const std::string lora = dir / (std::string(algo) + ".safetensors");
    saveLoraNetwork(network, lora);
    const auto run = sinter::test::runRunner({"merge_lora", "--sd_model", ckpt, "--models", lora, "--ratios", "0.5", "--save_to", out});
    ASSERT_EQ(run.exitCode, 0) << algo << ": " << run.err;
    sinter::models::SdxlCheckpoint merged = sinter::models::loadSdxlCheckpoint(out);
    size_t checked = 0;
    expectMerged(*base.unet, *merged.unet, {{&network, 0.5}}, &checked);
    expectMerged(*base.bigG, *merged.bigG, {{&network, 0.5}}, &checked);
    EXPECT_EQ(checked, network.modules().size()) << algo;
  }
}

TEST(MergeLoraIntoCheckpoint, LycorisDoRAIA3AndFullByTheirFormulas) {
  TempDir dir;
  const std::string ckpt = dir / "base.safetensors", out = dir / "merged.safetensors";
  sinter::models::writeRandomSdxlCheckpoint(ckpt, true, 10);
  sinter::models::SdxlCheckpoint base = sinter::models::loadSdxlCheckpoint(ckpt);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"algo=locon", "dora_wd=True"}, {"algo=ia3"}, {"algo=full"}}) {
    const LoraNetworkOptions options = sinter::test::loraNetworkOptions(4, 2.0, args, "lycoris.kohya");
    LoraNetwork network(options);
    network.attach(sinter::network::sdxlLoraRule(LoraComponent::Unet), *base.unet);
    network.attach(sinter::network::sdxlLoraRule(LoraComponent::TextEncoder2), *base.bigG);
    randomizeLoraNetwork(network, 12);
    const std::string lora = dir / (args.front().substr(5) + ".safetensors");
    saveLoraNetwork(network, lora);
    const auto run = sinter::test::runRunner({"merge_lora", "--sd_model", ckpt, "--models", lora, "--ratios", "0.6", "--save_to", out});
    ASSERT_EQ(run.exitCode, 0) << args.front() << ": " << run.err;
    sinter::models::SdxlCheckpoint merged = sinter::models::loadSdxlCheckpoint(out);
    size_t checked = 0;
    expectMerged(*base.unet, *merged.unet, {{&network, 0.6}}, &checked);
    expectMerged(*base.bigG, *merged.bigG, {{&network, 0.6}}, &checked);
    EXPECT_EQ(checked, network.modules().size()) << args.front();
  }
}

TEST(MergeLoraIntoCheckpoint, FluxTransformerAndItsTextEncodersGivenApart) {
  TempDir dir;
  const std::string flux = dir / "flux.safetensors", clip = dir / "clip_l.safetensors", t5 = dir / "t5xxl.safetensors",
                    lora = dir / "lora.safetensors";
  sinter::models::writeRandomFluxTransformer(flux, true, true, 3);
  sinter::models::writeRandomClipL(clip, true, 4);
  sinter::models::writeRandomT5Xxl(t5, true, 5);
  sinter::models::FluxTransformer base = sinter::models::loadFluxTransformer(flux);
  const LoraNetworkOptions options = sinter::test::loraNetworkOptions(4, 1.0);
  LoraNetwork network(options);
  network.attach(sinter::network::fluxLoraRule(LoraComponent::Unet), *base);
  randomizeLoraNetwork(network, 6);
  // The text encoders' modules by hand: one CLIP-L and one T5 Linear each.
  torch::manual_seed(8);
  const sinter::io::SafetensorsFile clipFile(clip), t5File(t5);
  const std::string clipKey = "text_model.encoder.layers.0.self_attn.q_proj.weight", t5Key = "encoder.block.0.layer.0.SelfAttention.q.weight";
  const auto clipShape = clipFile.info(clipKey).shape, t5Shape = t5File.info(t5Key).shape;
  std::vector<std::pair<std::string, torch::Tensor>> tensors = network.stateDict(torch::kFloat32);
  const torch::Tensor clipDown = torch::randn({2, clipShape[1]}), clipUp = torch::randn({clipShape[0], 2});
  const torch::Tensor t5Down = torch::randn({2, t5Shape[1]}), t5Up = torch::randn({t5Shape[0], 2});
  tensors.push_back({"lora_te1_text_model_encoder_layers_0_self_attn_q_proj.lora_down.weight", clipDown});
  tensors.push_back({"lora_te1_text_model_encoder_layers_0_self_attn_q_proj.lora_up.weight", clipUp});
  tensors.push_back({"lora_te3_encoder_block_0_layer_0_SelfAttention_q.lora_down.weight", t5Down});
  tensors.push_back({"lora_te3_encoder_block_0_layer_0_SelfAttention_q.lora_up.weight", t5Up});
  tensors.push_back({"lora_te3_encoder_block_0_layer_0_SelfAttention_q.alpha", torch::tensor(1.0)});
  sinter::io::writeSafetensors(lora, tensors);

  const std::string out = dir / "out.safetensors", clipOut = dir / "clip_out.safetensors", t5Out = dir / "t5_out.safetensors";
  const auto run = sinter::test::runRunner({"flux_merge_lora", "--flux_model", flux, "--clip_l", clip, "--clip_l_save_to", clipOut,
                                            "--t5xxl", t5, "--t5xxl_save_to", t5Out, "--models", lora, "--ratios", "0.8",
                                            "--save_to", out});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  sinter::models::FluxTransformer merged = sinter::models::loadFluxTransformer(out);
  size_t checked = 0;
  expectMerged(*base, *merged, {{&network, 0.8}}, &checked);
  EXPECT_EQ(checked, network.modules().size());
  // CLIP-L without alpha: scale 1; T5 with alpha 1 at rank 2: scale 1/2.
  const torch::Tensor clipExpected = clipFile.tensor(clipKey) + 0.8 * torch::matmul(clipUp, clipDown);
  const torch::Tensor t5Expected = t5File.tensor(t5Key) + 0.8 * 0.5 * torch::matmul(t5Up, t5Down);
  EXPECT_TRUE(torch::allclose(sinter::io::SafetensorsFile(clipOut).tensor(clipKey), clipExpected, 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(sinter::io::SafetensorsFile(t5Out).tensor(t5Key), t5Expected, 1e-5, 1e-5));
  EXPECT_EQ(sinter::io::SafetensorsFile(out).metadata().at("modelspec.architecture"), "flux-1-dev");
  EXPECT_EQ(sinter::io::SafetensorsFile(clipOut).metadata().count("modelspec.architecture"), 0u);
}

TEST(MergeLoraIntoCheckpoint, Sd3EveryModuleOfTheMmditClipsAndT5xxlIsBasePlusItsScaledDelta) {
  TempDir dir;
  const std::string ckpt = dir / "sd3.safetensors", a = dir / "a.safetensors", b = dir / "b.safetensors", out = dir / "merged.safetensors",
                    t5Out = dir / "t5_merged.safetensors";
  const std::string t5 = sinter::test::writeTinySd3Checkpoint(ckpt, 31);
  sinter::test::Sd3ToolModels base = sinter::test::loadSd3ToolModels(ckpt, t5);
  // A: every part, T5-XXL included, and emb_dims' embedders (the x_embedder's 2x2 patch conv, the
  // final layer); B: the MMDiT's joint blocks at another rank.
  const LoraNetworkOptions optionsA = sinter::test::sd3LoraOptions(4, 2.0, {"emb_dims=[2, 3, 2, 2, 2, 2]"});
  LoraNetwork loraA(optionsA);
  sinter::test::attachSd3Lora(loraA, optionsA, base, true);
  randomizeLoraNetwork(loraA, 1);
  sinter::test::saveSd3LoraNetwork(loraA, a);
  const LoraNetworkOptions optionsB = sinter::test::sd3LoraOptions(3, 3.0);
  LoraNetwork loraB(optionsB);
  sinter::test::attachSd3Lora(loraB, optionsB, base, false);
  randomizeLoraNetwork(loraB, 2);
  sinter::test::saveSd3LoraNetwork(loraB, b);
  std::set<std::string> names;
  for (const auto& m : loraA.modules()) names.insert(m.name);
  for (const char* name : {"lora_unet_joint_blocks_0_x_block_attn_qkv", "lora_unet_joint_blocks_0_context_block_attn_qkv",
                           "lora_unet_x_embedder_proj", "lora_te1_text_model_encoder_layers_0_self_attn_q_proj",
                           "lora_te2_text_model_encoder_layers_0_mlp_fc1", "lora_te3_encoder_block_0_layer_0_SelfAttention_q"})
    ASSERT_TRUE(names.count(name)) << name;

  const auto run = sinter::test::runRunner({"merge_lora", "--sd_model", ckpt, "--t5xxl", t5, "--t5xxl_save_to", t5Out, "--models", a, b,
                                            "--ratios", "0.7", "-0.4", "--save_to", out});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  sinter::test::Sd3ToolModels merged = sinter::test::loadSd3ToolModels(out, t5Out);
  size_t checked = 0;
  const std::vector<std::pair<const LoraNetwork*, double>> both = {{&loraA, 0.7}, {&loraB, -0.4}};
  expectMerged(*base.mmdit, *merged.mmdit, both, &checked);
  expectMerged(*base.clipL, *merged.clipL, both, &checked);
  expectMerged(*base.clipG, *merged.clipG, both, &checked);
  expectMerged(*base.t5, *merged.t5, both, &checked);
  EXPECT_EQ(checked, loraA.modules().size());  // B's modules are among A's

  // The fused qkv: one module over the whole [3·hidden, hidden] tensor, every row moved.
  const sinter::io::SafetensorsFile in(ckpt), file(out);
  const std::string qkv = "model.diffusion_model.joint_blocks.0.x_block.attn.qkv.weight";
  const torch::Tensor rowsMoved = (file.tensor(qkv) - in.tensor(qkv)).abs().amax(1);
  EXPECT_EQ(rowsMoved.size(0), 3 * base.mmdit->config().hiddenSize());
  EXPECT_GT(rowsMoved.min().item<double>(), 0.0);
  // SAI's layout kept (the VAE as it was), with SD 3's modelspec; T5-XXL's file without one.
  EXPECT_EQ(file.keys(), in.keys());
  EXPECT_TRUE(torch::equal(file.tensor("first_stage_model.decoder.conv_in.weight"), in.tensor("first_stage_model.decoder.conv_in.weight")));
  EXPECT_EQ(file.metadata().at("modelspec.architecture"), "stable-diffusion-3-5-medium");
  EXPECT_EQ(sinter::io::SafetensorsFile(t5Out).metadata().count("modelspec.architecture"), 0u);
}

TEST(MergeLoraIntoCheckpoint, Sd3TextEncodersAFileLacksAreNamedAndClipGGivenApart) {
  TempDir dir;
  const std::string ckpt = dir / "sd3.safetensors", mmditOnly = dir / "mmdit.safetensors", clipG = dir / "clip_g.safetensors",
                    lora = dir / "lora.safetensors", out = dir / "out.safetensors", clipGOut = dir / "clip_g_out.safetensors";
  sinter::test::writeTinySd3Checkpoint(ckpt, 32);
  sinter::test::Sd3ToolModels base = sinter::test::loadSd3ToolModels(ckpt);
  const LoraNetworkOptions options = sinter::test::sd3LoraOptions(2, 1.0);
  LoraNetwork network(options);
  sinter::test::attachSd3Lora(network, options, base, true);
  randomizeLoraNetwork(network, 3);
  sinter::test::saveSd3LoraNetwork(network, lora);
  // SD 3.5 Large's release layout: the MMDiT and VAE alone; CLIP-G as text_encoders/clip_g.safetensors.
  const sinter::io::SafetensorsFile in(ckpt);
  std::vector<std::pair<std::string, torch::Tensor>> single, clip;
  const std::string clipGPrefix = sinter::models::kSd3ClipGPrefix;
  for (const std::string& key : in.keys()) {
    if (key.rfind("text_encoders.", 0) != 0) single.emplace_back(key, in.tensor(key));
    if (key.rfind(clipGPrefix, 0) == 0) clip.emplace_back(key.substr(clipGPrefix.size()), in.tensor(key));
  }
  sinter::io::writeSafetensors(mmditOnly, single);
  sinter::io::writeSafetensors(clipG, clip);

  const auto run = sinter::test::runRunner({"merge_lora", "--sd_model", mmditOnly, "--models", lora, "--ratios", "1", "--save_to", out});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.err.find("name no weight of " + mmditOnly), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("lora_te1_text_model_encoder_layers_0_mlp_fc1"), std::string::npos) << run.err;  // the first, by name
  sinter::models::Sd3Mmdit merged = sinter::models::loadSd3Mmdit(sinter::io::SafetensorsFile(out));
  size_t checked = 0;
  expectMerged(*base.mmdit, *merged, {{&network, 1.0}}, &checked);
  EXPECT_GT(checked, 0u);

  const auto apart = sinter::test::runRunner({"merge_lora", "--clip_g", clipG, "--clip_g_save_to", clipGOut, "--models", lora,
                                              "--ratios", "0.5"});
  ASSERT_EQ(apart.exitCode, 0) << apart.err;
  sinter::models::ClipTextModel mergedClipG = sinter::train::loadSd3Clip(sinter::io::SafetensorsFile(clipGOut), true);
  checked = 0;
  expectMerged(*base.clipG, *mergedClipG, {{&network, 0.5}}, &checked);
  EXPECT_GT(checked, 0u);
  EXPECT_EQ(sinter::io::SafetensorsFile(clipGOut).keys(), sinter::io::SafetensorsFile(clipG).keys());

  // A LoRA of the text encoders alone fits nothing of the MMDiT's file: refused, nothing written.
  std::vector<std::pair<std::string, torch::Tensor>> textOnly;
  for (const auto& [key, tensor] : network.stateDict(torch::kFloat32))
    if (key.rfind("lora_te", 0) == 0) textOnly.emplace_back(key, tensor);
  const std::string teLora = dir / "te.safetensors", refusedOut = dir / "refused.safetensors";
  sinter::io::writeSafetensors(teLora, textOnly);
  const auto refused = sinter::test::runRunner({"merge_lora", "--sd_model", mmditOnly, "--models", teLora, "--ratios", "1", "--save_to",
                                                refusedOut});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("names a weight of"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(refusedOut));
}

TEST(MergeLoraFiles, TwoSd3LorasIntoOneAsMergeLoraModelsSumsThem) {
  TempDir dir;
  const std::string ckpt = dir / "sd3.safetensors", a = dir / "a.safetensors", b = dir / "b.safetensors", out = dir / "ab.safetensors";
  sinter::test::writeTinySd3Checkpoint(ckpt, 33);
  sinter::test::Sd3ToolModels base = sinter::test::loadSd3ToolModels(ckpt);
  for (const auto& [path, alpha, seed] : std::vector<std::tuple<std::string, double, uint64_t>>{{a, 1.0, 4}, {b, 4.0, 5}}) {
    const LoraNetworkOptions options = sinter::test::sd3LoraOptions(2, alpha);
    LoraNetwork network(options);
    sinter::test::attachSd3Lora(network, options, base, true);
    randomizeLoraNetwork(network, seed);
    sinter::test::saveSd3LoraNetwork(network, path);
  }
  const auto run = sinter::test::runRunner({"merge_lora", "--models", a, b, "--ratios", "0.5", "-2", "--save_to", out});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const sinter::io::SafetensorsFile fa(a), fb(b), file(out);
  EXPECT_EQ(file.keys(), fa.keys());
  // Each factor: the first's · 0.5 + the second's · √(4/1) · -2 (lora_up with its magnitude).
  for (const std::string module : {"lora_unet_joint_blocks_0_x_block_attn_qkv", "lora_te2_text_model_encoder_layers_0_self_attn_k_proj"}) {
    const std::string down = module + ".lora_down.weight", up = module + ".lora_up.weight";
    EXPECT_TRUE(torch::allclose(file.tensor(down), fa.tensor(down) * 0.5 + fb.tensor(down) * -4.0, 1e-5, 1e-5)) << module;
    EXPECT_TRUE(torch::allclose(file.tensor(up), fa.tensor(up) * 0.5 + fb.tensor(up) * 4.0, 1e-5, 1e-5)) << module;
  }
  EXPECT_EQ(file.metadata().at("ss_network_module"), "networks.lora_sd3");
  EXPECT_EQ(file.metadata().at("ss_base_model_version"), "5-medium");
  EXPECT_EQ(file.metadata().at("modelspec.architecture"), "stable-diffusion-3-5-medium/lora");
}

TEST(MergeLoraIntoCheckpoint, ALoraForAnotherModelIsRefusedAndNothingIsWritten) {
  TempDir dir;
  const std::string ckpt = dir / "sdxl.safetensors", lora = dir / "sd_lora.safetensors", out = dir / "out.safetensors";
  sinter::models::writeRandomSdxlCheckpoint(ckpt, true, 1);
  sinter::io::writeSafetensors(lora, {{"lora_unet_down_blocks_0_attentions_0_proj_in.lora_down.weight", torch::randn({2, 8})},
                                      {"lora_unet_down_blocks_0_attentions_0_proj_in.lora_up.weight", torch::randn({8, 2})}});
  const auto run = sinter::test::runRunner({"merge_lora", "--sd_model", ckpt, "--models", lora, "--ratios", "1", "--save_to", out});
  EXPECT_EQ(run.exitCode, 2);
  EXPECT_NE(run.err.find("names a weight of"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(out));
  const auto mismatch = sinter::test::runRunner({"merge_lora", "--sd_model", ckpt, "--models", lora, "--ratios", "1", "0.5",
                                                 "--save_to", out});
  EXPECT_EQ(mismatch.exitCode, 2);
  EXPECT_NE(mismatch.err.find("one ratio per LoRA"), std::string::npos) << mismatch.err;
}

TEST(MergeLoraFiles, SumsFactorsAsSdScriptsOrStacksThemWithConcat) {
  torch::manual_seed(3);
  const torch::Tensor d1 = torch::randn({2, 6}), u1 = torch::randn({5, 2}), d2 = torch::randn({2, 6}), u2 = torch::randn({5, 2});
  const std::vector<sinter::tools::LoraToMerge> loras = {
      {"a", 0.5, {{"m.lora_down.weight", d1}, {"m.lora_up.weight", u1}, {"m.alpha", torch::tensor(1.0)}}},
      {"b", -2.0, {{"m.lora_down.weight", d2}, {"m.lora_up.weight", u2}, {"m.alpha", torch::tensor(4.0)}}}};
  // merge_lora_models: scale √(alpha / first alpha) · ratio, lora_up with its magnitude; alpha the first's.
  const auto summed = sinter::tools::mergeLoraFiles(loras, torch::kFloat32, false, false);
  std::map<std::string, torch::Tensor> s(summed.tensors.begin(), summed.tensors.end());
  EXPECT_TRUE(torch::allclose(s.at("m.lora_down.weight"), d1 * 0.5 + d2 * (2.0 * -2.0)));
  EXPECT_TRUE(torch::allclose(s.at("m.lora_up.weight"), u1 * 0.5 + u2 * (2.0 * 2.0)));
  EXPECT_FLOAT_EQ(s.at("m.alpha").item<float>(), 1.0f);
  EXPECT_EQ(summed.dims, "2");
  EXPECT_EQ(summed.alphas, "1.0");
  const auto stacked = sinter::tools::mergeLoraFiles(loras, torch::kFloat32, true, false);
  std::map<std::string, torch::Tensor> c(stacked.tensors.begin(), stacked.tensors.end());
  EXPECT_EQ(c.at("m.lora_down.weight").sizes(), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(c.at("m.lora_up.weight").sizes(), (std::vector<int64_t>{5, 4}));
  // With concat the product is the sum of the scaled products (the first file's alpha/rank applies to all).
  const torch::Tensor product = torch::matmul(c.at("m.lora_up.weight"), c.at("m.lora_down.weight"));
  EXPECT_TRUE(torch::allclose(product, 0.25 * torch::matmul(u1, d1) + (-16.0) * torch::matmul(u2, d2), 1e-4, 1e-4));
  // Shuffled: the same product.
  const auto shuffled = sinter::tools::mergeLoraFiles(loras, torch::kFloat32, true, true);
  std::map<std::string, torch::Tensor> p(shuffled.tensors.begin(), shuffled.tensors.end());
  EXPECT_TRUE(torch::allclose(torch::matmul(p.at("m.lora_up.weight"), p.at("m.lora_down.weight")), product, 1e-4, 1e-4));
  // Ranks that differ need --concat; LyCORIS tensors cannot be summed as factors.
  std::vector<sinter::tools::LoraToMerge> ranks = loras;
  ranks[1].tensors["m.lora_down.weight"] = torch::randn({3, 6});
  ranks[1].tensors["m.lora_up.weight"] = torch::randn({5, 3});
  EXPECT_THROW(sinter::tools::mergeLoraFiles(ranks, torch::kFloat32, false, false), std::invalid_argument);
  std::vector<sinter::tools::LoraToMerge> loha = {{"c", 1.0, {{"m.hada_w1_a", torch::randn({5, 2})}}}};
  EXPECT_THROW(sinter::tools::mergeLoraFiles(loha, torch::kFloat32, false, false), std::invalid_argument);
}

TEST(MergeLoraFiles, TheCommandWritesMinimumMetadataAndTheFirstFilesModelSpec) {
  TempDir dir;
  const std::string a = dir / "a.safetensors", b = dir / "b.safetensors", out = dir / "ab.safetensors";
  torch::manual_seed(4);
  const std::map<std::string, std::string> meta = {{"ss_base_model_version", "sdxl_base_v1-0"}, {"ss_v2", "False"},
                                                   {"ss_network_module", "networks.lora"},
                                                   {"modelspec.architecture", "stable-diffusion-xl-v1-base/lora"},
                                                   {"modelspec.title", "first"}};
  sinter::io::writeSafetensors(a, {{"m.lora_down.weight", torch::randn({2, 6})}, {"m.lora_up.weight", torch::randn({5, 2})}}, meta);
  sinter::io::writeSafetensors(b, {{"m.lora_down.weight", torch::randn({4, 6})}, {"m.lora_up.weight", torch::randn({5, 4})}});
  const auto run = sinter::test::runRunner({"networks/merge_lora.py", "--models", a, b, "--ratios", "1", "1", "--concat",
                                            "--save_to", out, "--save_precision", "fp16"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const sinter::io::SafetensorsFile file(out);
  EXPECT_EQ(file.info("m.lora_down.weight").shape, (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(file.info("m.lora_down.weight").dtype, "F16");
  EXPECT_EQ(file.metadata().at("ss_network_dim"), "2");  // the first file's rank, as merge_lora_models writes it
  EXPECT_EQ(file.metadata().at("ss_base_model_version"), "sdxl_base_v1-0");
  EXPECT_EQ(file.metadata().at("modelspec.architecture"), "stable-diffusion-xl-v1-base/lora");
  EXPECT_EQ(file.metadata().at("modelspec.merged_from"), "first, b");
  EXPECT_EQ(file.metadata().at("modelspec.title"), "ab");
}

TEST(MergeLoraIntoCheckpoint, LbwsWeighEachBlockAsSdxlMergeLoraPyDoes) {
  TempDir dir;
  const std::string ckpt = dir / "base.safetensors", lora = dir / "lora.safetensors", out = dir / "merged.safetensors";
  sinter::models::writeRandomSdxlCheckpoint(ckpt, true, 13);
  sinter::models::SdxlCheckpoint base = sinter::models::loadSdxlCheckpoint(ckpt);
  const LoraNetworkOptions options = sinter::test::loraNetworkOptions(4, 4.0);
  LoraNetwork network(options);
  network.attach(sinter::network::sdxlLoraRule(LoraComponent::Unet), *base.unet);
  network.attach(sinter::network::sdxlLoraRule(LoraComponent::TextEncoder1), *base.clipL);
  randomizeLoraNetwork(network, 14);
  saveLoraNetwork(network, lora);
  // 26 weights: BASE (the text encoders) 1, every U-Net block 0: only the text encoder changes.
  std::string lbw = "[1";
  for (int i = 1; i < 26; ++i) lbw += ",0";
  lbw += "]";
  const auto run = sinter::test::runRunner({"sdxl_merge_lora", "--sd_model", ckpt, "--models", lora, "--ratios", "0.5", "--lbws", lbw,
                                            "--save_to", out});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  sinter::models::SdxlCheckpoint merged = sinter::models::loadSdxlCheckpoint(out);
  for (const auto& p : base.unet->named_parameters(true))
    EXPECT_TRUE(torch::equal(p.value(), merged.unet->named_parameters(true)[p.key()])) << p.key();
  size_t checked = 0;
  expectMerged(*base.clipL, *merged.clipL, {{&network, 0.5}}, &checked);
  EXPECT_GT(checked, 0u);
  // One list per LoRA.
  const auto refused = sinter::test::runRunner({"sdxl_merge_lora", "--sd_model", ckpt, "--models", lora, "--ratios", "0.5", "--lbws",
                                                lbw, lbw, "--save_to", dir / "x.safetensors"});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("one per LoRA"), std::string::npos) << refused.err;
}

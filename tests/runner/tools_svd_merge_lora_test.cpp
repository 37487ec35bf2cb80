// svd_merge_lora (tools/lora_svd_merge.h and `sinter-runner svd_merge_lora`): the summed deltas of
// several LoRAs against a float64 reference of svd_merge_lora.py's rule (Σ ratio · alpha/rank · up·down,
// truncated SVD), the quantile clamp against its definition, the ranks and alphas written, and the
// command's file; two SD 3.x LoRAs made on the tiny models as training makes them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "io/safetensors.h"
#include "runner_process.h"
#include "sd3_tool_files.h"
#include "temp_dir.h"
#include "tools/lora_svd_merge.h"
#include "tools/layer_block_weights.h"
#include "tools/low_rank_factors.h"
#include "tools/tool_files.h"

namespace fs = std::filesystem;
using namespace sinter::tools;

namespace {

std::map<std::string, torch::Tensor> lora(uint64_t seed, int64_t rank, double alpha) {
  torch::manual_seed(seed);
  return {{"lin.lora_down.weight", torch::randn({rank, 12})},       {"lin.lora_up.weight", torch::randn({10, rank})},
          {"lin.alpha", torch::tensor(alpha)},                       {"conv.lora_down.weight", torch::randn({rank, 4, 3, 3})},
          {"conv.lora_up.weight", torch::randn({6, rank, 1, 1})},    {"conv.alpha", torch::tensor(alpha)},
          {"pw.lora_down.weight", torch::randn({rank, 8, 1, 1})},    {"pw.lora_up.weight", torch::randn({5, rank, 1, 1})}};
}

// Σ ratio · alpha/rank · up·down as a matrix [out, in·k·k], in float64 (no alpha: scale 1).
torch::Tensor summed(const std::vector<LoraToMerge>& loras, const std::string& module) {
  torch::Tensor sum;
  for (const LoraToMerge& l : loras) {
    const torch::Tensor d = l.tensors.at(module + ".lora_down.weight").to(torch::kDouble);
    const torch::Tensor u = l.tensors.at(module + ".lora_up.weight").to(torch::kDouble);
    const auto alpha = l.tensors.find(module + ".alpha");
    const double scale = alpha == l.tensors.end() ? 1.0 : alpha->second.item<double>() / d.size(0);
    const torch::Tensor p = l.ratio * scale * torch::matmul(u.reshape({u.size(0), -1}), d.reshape({d.size(0), -1}));
    sum = sum.defined() ? sum + p : p;
  }
  return sum;
}

torch::Tensor truncated(const torch::Tensor& m, int64_t k) {
  const auto [u, s, vh] = torch::linalg_svd(m, false);
  return torch::matmul(u.slice(1, 0, k) * s.slice(0, 0, k), vh.slice(0, 0, k));
}

double relative(const torch::Tensor& a, const torch::Tensor& b) { return ((a - b).norm() / b.norm()).item<double>(); }

}  // namespace

TEST(SvdMergeLora, UnclampedTheProductIsTheTruncatedSvdOfTheSummedDeltas) {
  const std::vector<LoraToMerge> loras = {{"a", 1.0, lora(1, 3, 1.5)}, {"b", -0.5, lora(2, 2, 2.0)}};
  for (int64_t rank : {5, 2}) {
    SvdMergeOptions options;
    options.newRank = rank;
    options.newConvRank = rank;
    options.clampQuantile = std::nullopt;
    const auto out = svdMergeLoras(loras, options);
    const std::map<std::string, torch::Tensor> t(out.begin(), out.end());
    // The rank is capped by the weight's sides: channels for a convolution (conv: 4 in, 6 out).
    for (const auto& [module, cap] : std::map<std::string, int64_t>{{"lin", 10}, {"conv", 4}, {"pw", 5}}) {
      const int64_t k = std::min(rank, cap);
      const torch::Tensor down = t.at(module + ".lora_down.weight"), up = t.at(module + ".lora_up.weight");
      EXPECT_EQ(down.size(0), k) << module;
      EXPECT_EQ(up.size(1), k) << module;
      EXPECT_EQ(t.at(module + ".alpha").scalar_type(), torch::kInt64);  // torch.tensor(module_new_rank)
      EXPECT_EQ(t.at(module + ".alpha").item<int64_t>(), k);
      // alpha = rank: the product is the merged delta itself, the rank-k truncation of the sum.
      const torch::Tensor product = torch::matmul(up.reshape({up.size(0), k}), down.reshape({k, -1})).to(torch::kDouble);
      const torch::Tensor reference = truncated(summed(loras, module), k);
      EXPECT_LT(relative(product, reference), 1e-5) << module << " at rank " << rank;
    }
    EXPECT_EQ(t.at("conv.lora_down.weight").sizes(), (std::vector<int64_t>{std::min<int64_t>(rank, 4), 4, 3, 3}));
    EXPECT_EQ(t.at("conv.lora_up.weight").sizes(), (std::vector<int64_t>{6, std::min<int64_t>(rank, 4), 1, 1}));
    EXPECT_EQ(t.at("pw.lora_down.weight").sizes(), (std::vector<int64_t>{rank, 8, 1, 1}));
  }
  // 3x3 convolutions take --new_conv_rank.
  SvdMergeOptions wide;
  wide.newRank = 64;
  wide.newConvRank = 3;
  const auto out = svdMergeLoras(loras, wide);
  const std::map<std::string, torch::Tensor> t(out.begin(), out.end());
  EXPECT_EQ(t.at("lin.alpha").item<int64_t>(), 10);
  EXPECT_EQ(t.at("pw.alpha").item<int64_t>(), 5);
  EXPECT_EQ(t.at("conv.alpha").item<int64_t>(), 3);
}

// The clamp (± a quantile of the factors' values) is not sign-invariant, so the factors themselves
// must be those of svd_merge_lora.py's own steps: the sum formed in float32 in the files' order,
// torch.linalg.svd of it (full matrices), U·S and Vᴴ truncated, then clamped.
TEST(SvdMergeLora, FactorsAreSvdMergeLoraPysOwnClampedOnes) {
  const std::vector<LoraToMerge> loras = {{"a", 0.7, lora(5, 4, 2.0)}, {"b", 0.4, lora(6, 3, 1.0)}};
  SvdMergeOptions options;
  options.newRank = 3;
  options.newConvRank = 3;
  const auto out = svdMergeLoras(loras, options);
  const std::map<std::string, torch::Tensor> t(out.begin(), out.end());
  for (const std::string module : {"lin", "conv", "pw"}) {
    torch::Tensor weight;
    for (const LoraToMerge& l : loras) {
      const torch::Tensor d = l.tensors.at(module + ".lora_down.weight"), u = l.tensors.at(module + ".lora_up.weight");
      const auto alpha = l.tensors.find(module + ".alpha");
      const double scale = alpha == l.tensors.end() ? 1.0 : alpha->second.item<double>() / d.size(0);
      const torch::Tensor p = l.ratio * torch::matmul(u.reshape({u.size(0), -1}), d.reshape({d.size(0), -1})) * scale;
      weight = weight.defined() ? weight + p : torch::zeros_like(p) + p;
    }
    const auto [U, S, Vh] = torch::linalg_svd(weight, /*full_matrices=*/true);
    const int64_t k = std::min<int64_t>(3, module == "conv" ? 4 : weight.size(0));
    torch::Tensor up = U.slice(1, 0, k) * S.slice(0, 0, k), down = Vh.slice(0, 0, k);
    const torch::Tensor hi = torch::quantile(torch::cat({up.flatten(), down.flatten()}), 0.99);
    up = up.clamp(-hi.item<double>(), hi.item<double>());
    down = down.clamp(-hi.item<double>(), hi.item<double>());
    EXPECT_TRUE(torch::allclose(t.at(module + ".lora_up.weight").reshape_as(up), up, 1e-5, 1e-6)) << module;
    EXPECT_TRUE(torch::allclose(t.at(module + ".lora_down.weight").reshape_as(down), down, 1e-5, 1e-6)) << module;
  }
}

TEST(SvdMergeLora, TheClampIsSdScriptsBoundAtTheQuantileOfTheFactorsValues) {
  torch::manual_seed(4);
  const torch::Tensor delta = torch::randn({16, 3}).matmul(torch::randn({3, 20})) + 0.01 * torch::randn({16, 20});
  const LowRankFactors free = lowRankFactors(delta, 3, std::nullopt);
  for (double q : {0.99, 0.9, 1.0}) {
    const LowRankFactors clamped = lowRankFactors(delta, 3, q);
    // [-hi, hi] with hi the quantile of all values: a negative value below -hi is clipped even at 1.
    const double hi = torch::quantile(torch::cat({free.up.flatten(), free.down.flatten()}), q).item<double>();
    EXPECT_TRUE(torch::equal(clamped.up, free.up.clamp(-hi, hi))) << q;
    EXPECT_TRUE(torch::equal(clamped.down, free.down.clamp(-hi, hi))) << q;
  }
  // Something was clipped at 0.9 (else the rule went untested).
  EXPECT_FALSE(torch::equal(lowRankFactors(delta, 3, 0.9).up, free.up));
}

TEST(SvdMergeLoraCommand, WritesTheMergedLoraAndRefusesLycorisByName) {
  const fs::path dir = fs::temp_directory_path() / ("sinter_svd_merge_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string a = (dir / "a.safetensors").string(), b = (dir / "b.safetensors").string(), out = (dir / "ab.safetensors").string();
  const auto la = lora(1, 3, 1.5), lb = lora(2, 2, 2.0);
  sinter::io::writeSafetensors(a, {la.begin(), la.end()}, {{"ss_base_model_version", "sdxl_base_v1-0"}, {"ss_v2", "False"}});
  sinter::io::writeSafetensors(b, {lb.begin(), lb.end()});
  const auto run = sinter::test::runRunner({"networks/svd_merge_lora.py", "--models", a, b, "--ratios", "0.8", "-0.3",
                                            "--new_rank", "2", "--new_conv_rank", "1", "--save_to", out, "--save_precision", "bf16"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  {
    const sinter::io::SafetensorsFile file(out);
    EXPECT_EQ(file.info("lin.lora_up.weight").dtype, "BF16");
    EXPECT_EQ(file.info("lin.alpha").dtype, "I64");
    EXPECT_EQ(file.info("conv.lora_down.weight").shape, (std::vector<int64_t>{1, 4, 3, 3}));
    EXPECT_EQ(file.metadata().at("ss_network_dim"), "2");
    EXPECT_EQ(file.metadata().at("ss_network_alpha"), "2");
    EXPECT_EQ(file.metadata().at("ss_network_args"), "{\"conv_dim\": 1, \"conv_alpha\": 1}");
    EXPECT_EQ(file.metadata().at("ss_base_model_version"), "sdxl_base_v1-0");
    EXPECT_EQ(file.metadata().at("modelspec.merged_from"), "a, b");
  }
  fs::remove(out);
  const std::string loha = (dir / "loha.safetensors").string();
  sinter::io::writeSafetensors(loha, {{"m.hada_w1_a", torch::randn({4, 2})}, {"m.hada_w1_b", torch::randn({2, 3})},
                                      {"m.hada_w2_a", torch::randn({4, 2})}, {"m.hada_w2_b", torch::randn({2, 3})}});
  const auto refused = sinter::test::runRunner({"svd_merge_lora", "--models", loha, "--ratios", "1", "--save_to", out});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("LyCORIS loha"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

TEST(LayerBlockWeights, BlocksAndWeightsAsSvdMergeLoraPyReadsThem) {
  // get_lbw_block_index: text encoders 0; SDXL's input_blocks N at 1+N, middle 13, output N at 14+N.
  EXPECT_EQ(lbwBlockIndex("lora_te1_text_model_encoder_layers_0_mlp_fc1", true), 0);
  EXPECT_EQ(lbwBlockIndex("lora_unet_input_blocks_4_1_proj_in", true), 5);
  EXPECT_EQ(lbwBlockIndex("lora_unet_middle_block_1_proj_in", true), 13);
  EXPECT_EQ(lbwBlockIndex("lora_unet_output_blocks_0_1_proj_out", true), 14);
  EXPECT_EQ(lbwBlockIndex("lora_unet_time_embed_0", true), 1);
  // SD's diffusers names: down i, (resnet|attention) j at 1 + 3i + j + 1, downsampler at 1 + 3(i+1);
  // mid 13; up i, j at 14 + 3i + j, upsampler at 14 + 3i + 2.
  EXPECT_EQ(lbwBlockIndex("lora_unet_down_blocks_0_attentions_0_proj_in", false), 2);
  EXPECT_EQ(lbwBlockIndex("lora_unet_down_blocks_2_downsamplers_0_conv", false), 10);
  EXPECT_EQ(lbwBlockIndex("lora_unet_mid_block_attentions_0_proj_in", false), 13);
  EXPECT_EQ(lbwBlockIndex("lora_unet_up_blocks_1_upsamplers_0_conv", false), 19);
  EXPECT_EQ(lbwBlockIndex("lora_unet_conv_in", false), -1);
  // Each length's table names its blocks; the weights go to them in order.
  const auto lbws = parseLayerBlockWeights({"[0.5,2,3,1,1,1,1,1,1,1,1,1,1,1,1,1,1]"});
  ASSERT_EQ(lbws.size(), 1u);
  EXPECT_FALSE(lbws[0].sdxl);  // 17: SD (format_lbws' SDXL_LAYER_NUM is 12 and 20)
  EXPECT_DOUBLE_EQ(lbws[0].factor("lora_te_text_model_encoder_layers_0_mlp_fc1", false), 0.5);  // BASE
  // LAYER17 names BASE, IN01, IN02, IN04, ...: the values go to them in that order.
  EXPECT_DOUBLE_EQ(lbws[0].factor("lora_unet_down_blocks_0_attentions_0_proj_in", false), 2.0);  // IN01 (index 2)
  EXPECT_DOUBLE_EQ(lbws[0].factor("lora_unet_down_blocks_0_resnets_1_conv1", false), 3.0);       // IN02 (index 3)
  EXPECT_DOUBLE_EQ(lbws[0].factor("lora_unet_down_blocks_0_downsamplers_0_conv", false), 1.0);  // IN03 (index 4): not in LAYER17
  EXPECT_THROW(parseLayerBlockWeights({"[1,2,3]"}), std::invalid_argument);
  EXPECT_THROW(parseLayerBlockWeights({"not json"}), std::invalid_argument);
  EXPECT_THROW(parseLayerBlockWeights({std::string(26 * 2 + 1, ' ')}), std::invalid_argument);

  // svd_merge_lora: a module's delta takes its block's weight.
  LoraToMerge a{"a", 1.0, lora(1, 3, 1.5)};
  std::map<std::string, torch::Tensor> renamed;
  for (const auto& [key, value] : a.tensors) {
    const std::string module = key.substr(0, key.find('.'));
    const std::string name = module == "lin" ? "lora_te_text_model_encoder_layers_0_mlp_fc1"
                             : module == "pw" ? "lora_unet_down_blocks_0_attentions_0_proj_in"
                                              : "lora_unet_conv_in";
    renamed[name + key.substr(key.find('.'))] = value;
  }
  a.tensors = renamed;
  const LoraToMerge plain = a;
  a.lbw = lbws[0];
  SvdMergeOptions options;
  options.newRank = 8;
  options.clampQuantile = std::nullopt;
  const auto weighted = svdMergeLoras({a}, options), unweighted = svdMergeLoras({plain}, options);
  const std::map<std::string, torch::Tensor> w(weighted.begin(), weighted.end()), u(unweighted.begin(), unweighted.end());
  auto product = [](const std::map<std::string, torch::Tensor>& t, const std::string& m) {
    const torch::Tensor up = t.at(m + ".lora_up.weight"), down = t.at(m + ".lora_down.weight");
    return torch::matmul(up.reshape({up.size(0), -1}), down.reshape({down.size(0), -1}));
  };
  EXPECT_TRUE(torch::allclose(product(w, "lora_te_text_model_encoder_layers_0_mlp_fc1"),
                              0.5 * product(u, "lora_te_text_model_encoder_layers_0_mlp_fc1"), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(product(w, "lora_unet_down_blocks_0_attentions_0_proj_in"),
                              2.0 * product(u, "lora_unet_down_blocks_0_attentions_0_proj_in"), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(product(w, "lora_unet_conv_in"), product(u, "lora_unet_conv_in"), 1e-5, 1e-6));
}

TEST(SvdMergeLora, TwoSd3LorasAgainstAFloat64ReferenceOfEachModulesSum) {
  sinter::test::TempDir dir;
  const std::string ckpt = dir / "sd3.safetensors", a = dir / "a.safetensors", b = dir / "b.safetensors", out = dir / "ab.safetensors";
  sinter::test::writeTinySd3Checkpoint(ckpt, 61);
  sinter::test::Sd3ToolModels models = sinter::test::loadSd3ToolModels(ckpt);
  // A: joint blocks and both CLIPs at rank 3; B: rank 2 with emb_dims (the embedders and the 2x2 patch conv).
  const auto optionsA = sinter::test::sd3LoraOptions(3, 1.5), optionsB = sinter::test::sd3LoraOptions(2, 2.0, {"emb_dims=[2, 2, 2, 2, 2, 2]"});
  sinter::network::LoraNetwork loraA(optionsA), loraB(optionsB);
  sinter::test::attachSd3Lora(loraA, optionsA, models, true);
  sinter::test::attachSd3Lora(loraB, optionsB, models, false);
  sinter::test::randomizeLoraNetwork(loraA, 62);
  sinter::test::randomizeLoraNetwork(loraB, 63);
  sinter::test::saveSd3LoraNetwork(loraA, a);
  sinter::test::saveSd3LoraNetwork(loraB, b);
  const std::vector<LoraToMerge> loras = {{a, 0.8, readToolLora(a)}, {b, -0.5, readToolLora(b)}};
  // Σ ratio · alpha/rank · up·down in float64, over the files that have the module.
  auto reference = [&](const std::string& module) {
    torch::Tensor sum;
    for (const LoraToMerge& l : loras) {
      if (!l.tensors.count(module + ".lora_down.weight")) continue;
      const torch::Tensor d = l.tensors.at(module + ".lora_down.weight").to(torch::kDouble);
      const torch::Tensor u = l.tensors.at(module + ".lora_up.weight").to(torch::kDouble);
      const torch::Tensor p = l.ratio * l.tensors.at(module + ".alpha").item<double>() / d.size(0) *
                              torch::matmul(u.reshape({u.size(0), -1}), d.reshape({d.size(0), -1}));
      sum = sum.defined() ? sum + p : p;
    }
    return sum;
  };
  SvdMergeOptions options;
  options.newRank = 4;
  options.newConvRank = 4;
  options.clampQuantile = std::nullopt;
  const auto merged = svdMergeLoras(loras, options);
  const std::map<std::string, torch::Tensor> t(merged.begin(), merged.end());
  std::set<std::string> names;
  for (const auto* network : {&loraA, &loraB})
    for (const auto& m : network->modules()) names.insert(m.name);
  EXPECT_EQ(t.size(), names.size() * 3);
  for (const std::string& name : names) {
    const torch::Tensor down = t.at(name + ".lora_down.weight"), up = t.at(name + ".lora_up.weight");
    const int64_t k = down.size(0);
    const torch::Tensor sum = reference(name);
    EXPECT_EQ(k, std::min<int64_t>({4, sum.size(0), sum.size(1)})) << name;
    const torch::Tensor product = torch::matmul(up.reshape({up.size(0), k}), down.reshape({k, -1})).to(torch::kDouble);
    EXPECT_LT(relative(product, truncated(sum, k)), 1e-5) << name;
  }
  EXPECT_EQ(t.at("lora_unet_x_embedder_proj.lora_down.weight").dim(), 4);  // the 2x2 patch conv stays a conv

  const auto run = sinter::test::runRunner({"svd_merge_lora", "--models", a, b, "--ratios", "0.8", "-0.5", "--new_rank", "4",
                                            "--save_to", out});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const sinter::io::SafetensorsFile file(out);
  EXPECT_EQ(file.keys().size(), names.size() * 3);
  EXPECT_EQ(file.metadata().at("ss_base_model_version"), "5-medium");
  EXPECT_EQ(file.metadata().at("modelspec.architecture"), "stable-diffusion-3-5-medium/lora");
}

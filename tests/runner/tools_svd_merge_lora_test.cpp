// svd_merge_lora (tools/lora_svd_merge.h and `sinter-runner svd_merge_lora`): the summed deltas of
// several LoRAs against a float64 reference of svd_merge_lora.py's rule (Σ ratio · alpha/rank · up·down,
// truncated SVD), the quantile clamp against its definition, the ranks and alphas written, and the
// command's file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "io/safetensors.h"
#include "runner_process.h"
#include "tools/lora_svd_merge.h"
#include "tools/low_rank_factors.h"

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

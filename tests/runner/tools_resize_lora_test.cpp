// resize_lora (tools/lora_resize.h and the `sinter-runner resize_lora` command): the rank rules of
// sd-scripts' resize_lora.py against a float64 reference written from their definitions, the
// resized product against the truncated SVD of the original, and the file the command writes (an
// SD 3.x LoRA among them: the tool is key-generic, as resize_lora.py is).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "io/safetensors.h"
#include "runner_process.h"
#include "sd3_tool_files.h"
#include "temp_dir.h"
#include "tools/lora_resize.h"

namespace fs = std::filesystem;
using namespace sinter::tools;

namespace {

// resize_lora.py's rank_resize and index_sv_* as written there, on a plain vector holding the full
// SVD's values (zeros past the nonzero ones): index = the count of S > S[0]/param, or
// searchsorted(cumulative share, param (param² for sv_fro)) + 1; then max(1, min(index, len - 1)) + 1.
int64_t referenceRank(const std::vector<double>& s, DynamicRank method, double param, int64_t cap) {
  const int64_t n = static_cast<int64_t>(s.size());
  auto clampIndex = [n](int64_t i) { return std::max<int64_t>(1, std::min<int64_t>(i, n - 1)); };
  auto searchsorted = [](const std::vector<double>& sorted, double target) {
    return static_cast<int64_t>(std::lower_bound(sorted.begin(), sorted.end(), target) - sorted.begin());
  };
  int64_t rank = cap;
  if (method != DynamicRank::Fixed) {
    if (method == DynamicRank::SvRatio) {
      int64_t above = 0;
      for (double x : s) above += x > s[0] / param ? 1 : 0;
      rank = clampIndex(above) + 1;
    } else {
      const bool fro = method == DynamicRank::SvFro;
      double total = 0;
      for (double x : s) total += fro ? x * x : x;
      std::vector<double> shares;
      double running = 0;
      for (double x : s) shares.push_back((running += fro ? x * x : x) / total);
      rank = clampIndex(searchsorted(shares, fro ? param * param : param) + 1) + 1;
    }
  }
  if (s[0] <= 1e-6) return 1;
  return std::min(rank, cap);
}

torch::Tensor product(const std::map<std::string, torch::Tensor>& t, const std::string& prefix, const char* down = "lora_down",
                      const char* up = "lora_up") {
  const torch::Tensor d = t.at(prefix + "." + down + ".weight").to(torch::kDouble);
  const torch::Tensor u = t.at(prefix + "." + up + ".weight").to(torch::kDouble);
  const double scale = t.count(prefix + ".alpha") ? t.at(prefix + ".alpha").item<double>() / d.size(0) : 1.0;
  return torch::matmul(u.reshape({u.size(0), -1}), d.reshape({d.size(0), -1})) * scale;
}

std::map<std::string, torch::Tensor> asMap(const std::vector<std::pair<std::string, torch::Tensor>>& v) {
  return {v.begin(), v.end()};
}

double relative(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max()).item<double>();
}

std::map<std::string, torch::Tensor> randomLora() {
  torch::manual_seed(11);
  return {{"lora_unet_a.lora_down.weight", torch::randn({6, 20})},
          {"lora_unet_a.lora_up.weight", torch::randn({12, 6})},
          {"lora_unet_a.alpha", torch::tensor(3.0)},
          {"lora_unet_conv.lora_down.weight", torch::randn({5, 4, 3, 3})},
          {"lora_unet_conv.lora_up.weight", torch::randn({8, 5, 1, 1})},
          {"lora_unet_conv.alpha", torch::tensor(5.0)}};
}

}  // namespace

TEST(ResizeLora, EachDynamicRuleChoosesTheRankResizeLoraPyChooses) {
  // Worked by hand: Σ S = 18.6, Σ S² = 130.26; sd-scripts keeps one value more than the position it
  // finds (index + 1), as its rank_resize adds one to index_sv_*'s result.
  const torch::Tensor s = torch::tensor({10.0, 5.0, 2.0, 1.0, 0.5, 0.1}, torch::kDouble);
  EXPECT_EQ(chooseRank(s, 6, 16, DynamicRank::SvRatio, 4.0), 3);        // 2 values > 2.5: index 2, rank 3
  EXPECT_EQ(chooseRank(s, 6, 16, DynamicRank::SvCumulative, 0.9), 4);   // 17/18.6 = 0.914 at position 2: index 3
  EXPECT_EQ(chooseRank(s, 6, 16, DynamicRank::SvFro, 0.95), 3);         // 125/130.26 = 0.9596 >= 0.9025 at position 1
  EXPECT_EQ(chooseRank(s, 6, 2, DynamicRank::SvCumulative, 0.99), 2);   // capped at --new_rank
  EXPECT_EQ(chooseRank(s, 6, 4, DynamicRank::Fixed, 0), 4);
  EXPECT_EQ(chooseRank(torch::zeros({6}, torch::kDouble), 6, 4, DynamicRank::Fixed, 0), 1);  // a zero module keeps rank 1
  // A rank-4 product of a 12-wide weight: sd-scripts' full SVD has 8 more zeros, which its clamp to
  // len - 1 sees (a target never reached lands past the nonzero values).
  const torch::Tensor four = torch::tensor({4.0, 3.0, 2.0, 1.0}, torch::kDouble);
  EXPECT_EQ(chooseRank(four, 12, 16, DynamicRank::SvCumulative, 1.5), 12);
  torch::manual_seed(3);
  for (int trial = 0; trial < 200; ++trial) {
    const torch::Tensor values = std::get<0>(torch::sort(torch::rand({12}, torch::kDouble).pow(3) * 5, 0, /*descending=*/true));
    std::vector<double> v(values.data_ptr<double>(), values.data_ptr<double>() + 12);
    v.resize(16, 0.0);  // the full SVD of a 16-wide weight
    for (const auto& [method, param] : std::vector<std::pair<DynamicRank, double>>{
             {DynamicRank::SvRatio, 2.0}, {DynamicRank::SvRatio, 10.0}, {DynamicRank::SvCumulative, 0.5},
             {DynamicRank::SvCumulative, 0.95}, {DynamicRank::SvFro, 0.7}, {DynamicRank::SvFro, 0.99}})
      ASSERT_EQ(chooseRank(values, 16, 8, method, param), referenceRank(v, method, param, 8)) << "trial " << trial;
  }
  EXPECT_THROW(parseDynamicRank("sv_max"), std::invalid_argument);
}

TEST(ResizeLora, FullRankReproducesTheLoraAndAlphaKeepsTheScale) {
  const auto lora = randomLora();
  ResizeOptions o;
  o.newRank = 6;
  o.newConvRank = 5;
  const ResizeResult r = resizeLora(lora, o);
  const auto out = asMap(r.tensors);
  EXPECT_LT(relative(product(out, "lora_unet_a"), product(lora, "lora_unet_a")), 1e-5);
  EXPECT_LT(relative(product(out, "lora_unet_conv"), product(lora, "lora_unet_conv")), 1e-5);
  EXPECT_EQ(out.at("lora_unet_conv.lora_down.weight").sizes(), torch::IntArrayRef({5, 4, 3, 3}));
  EXPECT_EQ(out.at("lora_unet_conv.lora_up.weight").sizes(), torch::IntArrayRef({8, 5, 1, 1}));
  EXPECT_NEAR(out.at("lora_unet_a.alpha").item<double>(), 3.0, 1e-6);  // 3/6 · 6
  EXPECT_EQ(r.modules.size(), 2u);
  for (const ResizedModule& m : r.modules) EXPECT_NEAR(m.froRetained, 1.0, 1e-9);
  // Never more directions than a module has: rank 64 asked, 6 kept.
  o.newRank = 64;
  EXPECT_EQ(asMap(resizeLora(lora, o).tensors).at("lora_unet_a.lora_down.weight").size(0), 6);
}

TEST(ResizeLora, ASmallerRankIsTheTruncatedSvdOfTheProduct) {
  const auto lora = randomLora();
  ResizeOptions o;
  o.newRank = 3;
  o.newConvRank = 2;
  const ResizeResult r = resizeLora(lora, o);
  const auto out = asMap(r.tensors);
  for (const auto& [name, rank] : std::vector<std::pair<std::string, int64_t>>{{"lora_unet_a", 3}, {"lora_unet_conv", 2}}) {
    const torch::Tensor w = product(lora, name);
    const auto [u, s, vh] = torch::linalg_svd(w, false);
    const torch::Tensor best = torch::matmul(u.slice(1, 0, rank) * s.slice(0, 0, rank), vh.slice(0, 0, rank));
    EXPECT_LT(relative(product(out, name), best), 1e-5) << name;
    EXPECT_EQ(out.at(name + ".lora_down.weight").size(0), rank);
    EXPECT_NEAR(out.at(name + ".alpha").item<double>(), lora.at(name + ".alpha").item<double>() / lora.at(name + ".lora_down.weight").size(0) * rank,
                1e-6);
  }
  const ResizedModule& a = r.modules.front().name == "lora_unet_a" ? r.modules.front() : r.modules.back();
  const auto [u, s, vh] = torch::linalg_svd(product(lora, "lora_unet_a"), false);
  EXPECT_NEAR(a.sumRetained, (s.slice(0, 0, 3).sum() / s.sum()).item<double>(), 1e-9);
  EXPECT_NEAR(a.froRetained, (s.slice(0, 0, 3).norm() / s.norm()).item<double>(), 1e-9);
  EXPECT_NEAR(a.maxRatio, (s[0] / s[2]).item<double>(), 1e-6);
}

TEST(ResizeLora, OtherNamingsAndTensorsOfNoModule) {
  torch::manual_seed(5);
  const std::map<std::string, torch::Tensor> peft = {
      {"base.q.lora_A.weight", torch::randn({4, 10})}, {"base.q.lora_B.weight", torch::randn({7, 4})},
      {"lora_unet_b.hada_w1_a", torch::randn({7, 2})}};
  ResizeOptions o;
  o.newRank = 2;
  o.saveDtype = torch::kFloat16;
  const ResizeResult r = resizeLora(peft, o);
  const auto out = asMap(r.tensors);
  EXPECT_EQ(out.at("base.q.lora_A.weight").sizes(), torch::IntArrayRef({2, 10}));
  EXPECT_EQ(out.at("base.q.lora_B.weight").scalar_type(), torch::kFloat16);
  EXPECT_NEAR(out.at("base.q.alpha").item<double>(), 2.0, 1e-6);  // no alpha: scale 1
  ASSERT_EQ(r.copied, std::vector<std::string>{"lora_unet_b.hada_w1_a"});
  EXPECT_TRUE(torch::equal(out.at("lora_unet_b.hada_w1_a"), peft.at("lora_unet_b.hada_w1_a").to(torch::kFloat16)));
  EXPECT_THROW(resizeLora({{"x.weight", torch::randn({3, 3})}}, o), std::invalid_argument);
  EXPECT_THROW(resizeLora({{"m.lora_down.weight", torch::randn({4, 10})}, {"m.lora_up.weight", torch::randn({7, 3})}}, o),
               std::invalid_argument);
}

TEST(ResizeLoraCommand, WritesTheFileWithResizeLoraPysMetadata) {
  const fs::path dir = fs::temp_directory_path() / ("sinter_resize_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string in = (dir / "in.safetensors").string(), out = (dir / "out.safetensors").string();
  const auto lora = randomLora();
  sinter::io::writeSafetensors(in, {lora.begin(), lora.end()},
                               {{"ss_network_dim", "6"}, {"ss_training_comment", "mine"}, {"sshs_model_hash", "abc"}});
  const auto fixed = sinter::test::runRunner({"resize_lora", "--model", in, "--save_to", out, "--new_rank", "3", "--new_conv_rank=2",
                                              "--save_precision", "fp16"});
  ASSERT_EQ(fixed.exitCode, 0) << fixed.err;
  {
    const sinter::io::SafetensorsFile file(out);
    EXPECT_EQ(file.metadata().at("ss_network_dim"), "3");
    EXPECT_EQ(file.metadata().at("ss_network_alpha"), "2.0");  // the last module's: conv, 5/5 · 2
    EXPECT_EQ(file.metadata().at("ss_training_comment"), "dimension is resized from 6 to 3 (conv: 2); mine");
    EXPECT_EQ(file.metadata().count("sshs_model_hash"), 0u);
    EXPECT_EQ(file.info("lora_unet_a.lora_up.weight").dtype, "F16");
    EXPECT_EQ(file.info("lora_unet_a.lora_up.weight").shape, (std::vector<int64_t>{12, 3}));
  }
  const auto dynamic = sinter::test::runRunner({"networks/resize_lora.py", "--model", in, "--save_to", out, "--new_rank", "4",
                                                "--dynamic_method", "sv_fro", "--dynamic_param", "0.5", "--verbose"});
  ASSERT_EQ(dynamic.exitCode, 0) << dynamic.err;
  EXPECT_NE(dynamic.err.find("lora_unet_a"), std::string::npos);
  EXPECT_NE(dynamic.err.find("dynamic | dim: "), std::string::npos);
  EXPECT_EQ(sinter::io::SafetensorsFile(out).metadata().at("ss_network_dim"), "Dynamic");
  // Refused before anything is written: a missing parameter, an unknown flag.
  fs::remove(out);
  EXPECT_EQ(sinter::test::runRunner({"resize_lora", "--model", in, "--save_to", out, "--dynamic_method", "sv_ratio"}).exitCode, 2);
  const auto unknown = sinter::test::runRunner({"resize_lora", "--model", in, "--save_to", out, "--new_rnak", "3"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("--new_rnak"), std::string::npos);
  const auto ambiguous = sinter::test::runRunner({"resize_lora", "--model", in, "--save_to", out, "--new_", "3"});
  EXPECT_EQ(ambiguous.exitCode, 2);
  EXPECT_NE(ambiguous.err.find("could match --new_conv_rank, --new_rank"), std::string::npos) << ambiguous.err;
  EXPECT_FALSE(fs::exists(out));
  // An unambiguous prefix is the flag, as argparse reads it.
  EXPECT_EQ(sinter::test::runRunner({"resize_lora", "--model", in, "--save_to", out, "--new_r", "3"}).exitCode, 0);
  fs::remove_all(dir);
}

TEST(ResizeLoraCommand, AnSd3LoraAtFullRankIsReproducedAndAtASmallerOneTruncated) {
  sinter::test::TempDir dir;
  const std::string ckpt = dir / "sd3.safetensors", in = dir / "sd3_lora.safetensors", full = dir / "full.safetensors",
                    small = dir / "small.safetensors";
  sinter::test::writeTinySd3Checkpoint(ckpt, 51);
  sinter::test::Sd3ToolModels models = sinter::test::loadSd3ToolModels(ckpt);
  // The MMDiT (emb_dims: its embedders, the x_embedder's 2x2 patch conv and the final layer) and both CLIPs.
  const sinter::network::LoraNetworkOptions options = sinter::test::sd3LoraOptions(4, 2.0, {"emb_dims=[3, 3, 3, 3, 3, 3]"});
  sinter::network::LoraNetwork network(options);
  sinter::test::attachSd3Lora(network, options, models, true);
  sinter::test::randomizeLoraNetwork(network, 52);
  sinter::test::saveSd3LoraNetwork(network, in);
  auto read = [](const std::string& path) {
    const sinter::io::SafetensorsFile file(path);
    std::map<std::string, torch::Tensor> tensors;
    for (const std::string& key : file.keys()) tensors[key] = file.tensor(key);
    return tensors;
  };
  const auto original = read(in);
  ASSERT_TRUE(original.count("lora_unet_x_embedder_proj.lora_down.weight"));
  ASSERT_TRUE(original.count("lora_unet_joint_blocks_0_context_block_attn_qkv.lora_up.weight"));

  const auto atFull = sinter::test::runRunner({"resize_lora", "--model", in, "--save_to", full, "--new_rank", "4"});
  ASSERT_EQ(atFull.exitCode, 0) << atFull.err;
  const auto resized = read(full);
  EXPECT_EQ(resized.size(), original.size());
  size_t modules = 0;
  for (const auto& m : network.modules()) {
    ASSERT_TRUE(resized.count(m.name + ".lora_down.weight")) << m.name;
    EXPECT_EQ(resized.at(m.name + ".lora_down.weight").sizes(), original.at(m.name + ".lora_down.weight").sizes()) << m.name;
    EXPECT_LT(relative(product(resized, m.name), product(original, m.name)), 1e-5) << m.name;
    ++modules;
  }
  EXPECT_EQ(modules * 3, original.size());
  EXPECT_EQ(sinter::io::SafetensorsFile(full).metadata().at("ss_network_module"), "networks.lora_sd3");

  const auto atTwo = sinter::test::runRunner({"networks/resize_lora.py", "--model", in, "--save_to", small, "--new_rank", "2"});
  ASSERT_EQ(atTwo.exitCode, 0) << atTwo.err;
  const auto two = read(small);
  for (const std::string name : {"lora_unet_joint_blocks_1_x_block_attn_qkv", "lora_unet_x_embedder_proj",
                                 "lora_te2_text_model_encoder_layers_0_self_attn_v_proj"}) {
    const auto [u, s, vh] = torch::linalg_svd(product(original, name), false);
    const torch::Tensor best = torch::matmul(u.slice(1, 0, 2) * s.slice(0, 0, 2), vh.slice(0, 0, 2));
    EXPECT_EQ(two.at(name + ".lora_down.weight").size(0), 2) << name;
    EXPECT_LT(relative(product(two, name), best), 1e-5) << name;
  }
  EXPECT_EQ(sinter::io::SafetensorsFile(small).metadata().at("ss_network_dim"), "2");
}

// The LoRA tools on LoRA files that bundle textual inversion embeddings (pivotal tuning's
// bundle_emb.<token>.<part>, tools/bundled_embeddings.h): resize_lora keeps them as they are,
// svd_merge_lora and merge_lora into one LoRA carry each token once (the same token with other
// rows in two files is refused naming both), merge_lora into a checkpoint writes each apart as the
// embedding file textual inversion writes (read back by its own reader), and check_lora_weights
// lists them without counting them as modules.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "io/safetensors.h"
#include "models/checkpoints/random_checkpoint.h"
#include "models/checkpoints/sdxl_checkpoint.h"
#include "network/lora_network.h"
#include "random_lora_network.h"
#include "runner_process.h"
#include "temp_dir.h"
#include "tools/bundled_embeddings.h"
#include "train/methods/embedding_file.h"

namespace fs = std::filesystem;
using namespace sinter::tools;
using sinter::test::runRunner;
using sinter::test::TempDir;

namespace {

using Tensors = std::map<std::string, torch::Tensor>;

// Two plain LoRA modules (a Linear and a 3x3 convolution), as resize and the merges read them.
Tensors loraModules(uint64_t seed) {
  torch::manual_seed(seed);
  return {{"lora_unet_a.lora_down.weight", torch::randn({4, 20})}, {"lora_unet_a.lora_up.weight", torch::randn({12, 4})},
          {"lora_unet_a.alpha", torch::tensor(2.0)},              {"lora_unet_c.lora_down.weight", torch::randn({4, 3, 3, 3})},
          {"lora_unet_c.lora_up.weight", torch::randn({6, 4, 1, 1})}, {"lora_unet_c.alpha", torch::tensor(4.0)}};
}

// An SDXL embedding bundled as pivotal tuning bundles it: clip_l stored in bf16, clip_g in float32.
Tensors sdxlEmbedding(const std::string& token, uint64_t seed, int64_t widthL = 32, int64_t widthG = 48) {
  torch::manual_seed(seed);
  return {{"bundle_emb." + token + ".clip_l", torch::randn({2, widthL}).to(torch::kBFloat16)},
          {"bundle_emb." + token + ".clip_g", torch::randn({2, widthG})}};
}

Tensors joined(Tensors a, const Tensors& b) {
  a.insert(b.begin(), b.end());
  return a;
}

void write(const std::string& path, const Tensors& tensors) {
  sinter::io::writeSafetensors(path, {tensors.begin(), tensors.end()}, {{"ss_network_module", "networks.lora"}});
}

// The stored tensor of `key`: dtype and bits.
void expectStoredAs(const sinter::io::SafetensorsFile& file, const std::string& key, const torch::Tensor& expected) {
  ASSERT_TRUE(file.has(key)) << key;
  const torch::Tensor got = file.tensor(key);
  EXPECT_EQ(got.scalar_type(), expected.scalar_type()) << key;
  EXPECT_TRUE(torch::equal(got, expected)) << key;
}

}  // namespace

TEST(BundledEmbeddings, SplitFromTheModulesDescribedAndCombinedOncePerToken) {
  const Tensors sd = {{"bundle_emb.zz.string_to_param.*", torch::ones({3, 768})}};
  const LoraWithEmbeddings split = splitBundledEmbeddings(joined(joined(loraModules(1), sdxlEmbedding("sks", 2)), sd), "a.safetensors");
  EXPECT_EQ(split.modules.size(), 6u);
  ASSERT_EQ(split.embeddings.size(), 2u);
  const BundledEmbedding& sks = split.embeddings[0];
  EXPECT_EQ(sks.token, "sks");
  EXPECT_EQ(sks.path, "a.safetensors");
  EXPECT_EQ(sks.vectors(), 2);
  EXPECT_EQ(sks.describe(), "sks (2 vectors: clip_g 48 wide, clip_l 32 wide)");
  // SD 1.x/2.x's string_to_param.* is the embedding file's emb_params.
  EXPECT_EQ(split.embeddings[1].describe(), "zz (3 vectors: emb_params 768 wide)");
  EXPECT_EQ(split.embeddings[1].embeddingFileTensors().front().first, "emb_params");
  EXPECT_EQ(bundledEmbeddingTensors(split.embeddings).size(), 3u);

  for (const char* bad : {"bundle_emb.sks", "bundle_emb..clip_l", "bundle_emb.sks."}) {
    try {
      splitBundledEmbeddings({{bad, torch::ones({2, 4})}}, "bad.safetensors");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("bad.safetensors: '") + bad + "'"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(splitBundledEmbeddings({{"bundle_emb.sks.clip_l", torch::ones({2, 4, 4})}}, "x"), std::invalid_argument);

  // The same token in two files: kept once where the rows are the same, refused where they differ.
  const std::vector<BundledEmbedding> a = splitBundledEmbeddings(sdxlEmbedding("sks", 2), "a.safetensors").embeddings;
  const std::vector<BundledEmbedding> b = splitBundledEmbeddings(joined(sdxlEmbedding("sks", 2), sdxlEmbedding("cat", 3)), "b.safetensors").embeddings;
  const std::vector<BundledEmbedding> c = splitBundledEmbeddings(sdxlEmbedding("sks", 4), "c.safetensors").embeddings;
  const std::vector<BundledEmbedding> both = combineBundledEmbeddings({a, b});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].token, "sks");
  EXPECT_EQ(both[0].path, "a.safetensors");
  EXPECT_EQ(both[1].token, "cat");
  try {
    combineBundledEmbeddings({a, c});
    ADD_FAILURE() << "two embeddings of one token were merged";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"sks\" is bundled in a.safetensors and in c.safetensors with other rows"), std::string::npos)
        << e.what();
  }
}

TEST(BundledEmbeddingsInTools, ResizeKeepsThemAsStoredAndCheckLoraWeightsListsThem) {
  TempDir dir;
  const std::string in = dir / "pivotal.safetensors", out = dir / "resized.safetensors";
  const Tensors embedding = sdxlEmbedding("sks", 7);
  write(in, joined(loraModules(1), embedding));
  const auto run = runRunner({"resize_lora", "--model", in, "--save_to", out, "--new_rank", "2", "--save_precision", "fp16"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const sinter::io::SafetensorsFile file(out);
  EXPECT_EQ(file.info("lora_unet_a.lora_down.weight").shape, (std::vector<int64_t>{2, 20}));
  EXPECT_EQ(file.info("lora_unet_a.lora_down.weight").dtype, "F16");
  // Unchanged, in their own dtypes, and not among the tensors "of no module".
  for (const auto& [key, tensor] : embedding) expectStoredAs(file, key, tensor);
  EXPECT_NE(run.err.find("bundled embedding sks (2 vectors: clip_g 48 wide, clip_l 32 wide): kept unchanged"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("copied unchanged"), std::string::npos) << run.err;

  const auto check = runRunner({"check_lora_weights", out});
  ASSERT_EQ(check.exitCode, 0) << check.err;
  EXPECT_NE(check.out.find("\nmodules: 2: LoCon (3x3 conv) (1 modules), LoRA (1 modules)\n"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("\nbundled embeddings: 1: sks (2 vectors: clip_g 48 wide, clip_l 32 wide)\n"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("number of LoRA modules: 4\n"), std::string::npos) << check.out;
}

TEST(BundledEmbeddingsInTools, MergesIntoOneLoraCarryEachTokenOnce) {
  TempDir dir;
  const std::string a = dir / "a.safetensors", b = dir / "b.safetensors", c = dir / "c.safetensors";
  const Tensors sks = sdxlEmbedding("sks", 7), cat = sdxlEmbedding("cat", 8);
  write(a, joined(loraModules(1), sks));
  write(b, joined(joined(loraModules(2), sks), cat));  // the same sks rows, and a token of its own
  write(c, joined(loraModules(3), sdxlEmbedding("sks", 9)));  // sks with other rows
  const std::vector<std::vector<std::string>> tools = {
      {"svd_merge_lora", "--new_rank", "2", "--new_conv_rank", "2"}, {"merge_lora"}, {"merge_lora", "--concat"}};
  for (const std::vector<std::string>& tool : tools) {
    SCOPED_TRACE(tool[0] + (tool.size() > 1 ? " " + tool[1] : ""));
    const std::string out = dir / "merged.safetensors";
    std::vector<std::string> args = tool;
    for (const std::string& s : {"--models", a.c_str(), b.c_str(), "--ratios", "0.7", "0.5", "--save_to", out.c_str(), "--save_precision", "fp16"})
      args.push_back(s);
    const auto run = runRunner(args);
    ASSERT_EQ(run.exitCode, 0) << run.err;
    {
      const sinter::io::SafetensorsFile file(out);
      for (const auto& [key, tensor] : joined(sks, cat)) expectStoredAs(file, key, tensor);  // no ratio, no cast
      EXPECT_EQ(file.info("lora_unet_a.lora_up.weight").dtype, "F16");
      size_t bundled = 0;
      for (const std::string& key : file.keys()) bundled += isBundledEmbeddingKey(key) ? 1 : 0;
      EXPECT_EQ(bundled, 4u);
    }
    fs::remove(out);
    std::vector<std::string> refusedArgs = tool;
    for (const std::string& s : {"--models", a.c_str(), c.c_str(), "--ratios", "1", "1", "--save_to", out.c_str()}) refusedArgs.push_back(s);
    const auto refused = runRunner(refusedArgs);
    EXPECT_EQ(refused.exitCode, 2);
    EXPECT_NE(refused.err.find("\"sks\" is bundled in " + a + " and in " + c + " with other rows"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(out));
  }
}

// The LoRA is made for the tiny SDXL checkpoint as training makes it; its bundled embedding (the
// encoders' widths) is written apart beside the merged checkpoint, which holds none of it.
TEST(BundledEmbeddingsInTools, MergeIntoACheckpointWritesEachEmbeddingApart) {
  TempDir dir;
  const std::string ckpt = dir / "base.safetensors", lora = dir / "pivotal.safetensors", out = dir / "merged.safetensors";
  sinter::models::writeRandomSdxlCheckpoint(ckpt, true, 5);
  sinter::models::SdxlCheckpoint base = sinter::models::loadSdxlCheckpoint(ckpt);
  const int64_t widthL = base.clipL->textModel()->tokenEmbedding()->weight.size(1);
  const int64_t widthG = base.bigG->textModel()->tokenEmbedding()->weight.size(1);
  sinter::network::LoraNetwork network(sinter::test::loraNetworkOptions(4, 2.0));
  network.attach(sinter::network::sdxlLoraRule(sinter::network::LoraComponent::Unet), *base.unet);
  sinter::test::randomizeLoraNetwork(network, 1);
  Tensors tensors;
  for (const auto& [key, tensor] : network.stateDict(torch::kFloat32)) tensors.emplace(key, tensor);
  const Tensors embedding = sdxlEmbedding("sks", 3, widthL, widthG);
  write(lora, joined(tensors, embedding));

  const auto run = runRunner({"sdxl_merge_lora.py", "--sd_model", ckpt, "--models", lora, "--ratios", "0.8", "--save_to", out,
                              "--save_precision", "fp16"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(sinter::io::SafetensorsFile(out).keys(), sinter::io::SafetensorsFile(ckpt).keys());
  const std::string apart = dir / "merged_sks.safetensors";
  ASSERT_TRUE(fs::exists(apart)) << run.err;
  EXPECT_NE(run.err.find("cannot go into a checkpoint: written apart as " + apart), std::string::npos) << run.err;
  const sinter::io::SafetensorsFile file(apart);
  EXPECT_EQ(file.keys(), (std::vector<std::string>{"clip_g", "clip_l"}));
  expectStoredAs(file, "clip_l", embedding.at("bundle_emb.sks.clip_l"));
  expectStoredAs(file, "clip_g", embedding.at("bundle_emb.sks.clip_g"));
  EXPECT_EQ(file.metadata().at("modelspec.architecture"), "stable-diffusion-xl-v1-base/textual-inversion");
  EXPECT_EQ(file.metadata().at("modelspec.title"), "sks");
  EXPECT_EQ(file.metadata().at("modelspec.merged_from"), "pivotal");
  // Textual inversion's own reader takes it for this model's encoders (as `weights`, or a grid row).
  const std::vector<torch::Tensor> rows =
      sinter::train::readEmbeddingFile(apart, {{"clip_l", {2, widthL}}, {"clip_g", {2, widthG}}}, {"--sample_grid", false});
  EXPECT_TRUE(torch::equal(rows[0], embedding.at("bundle_emb.sks.clip_l").to(torch::kFloat32)));
}

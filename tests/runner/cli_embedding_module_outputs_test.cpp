// sinter-runner --module_outputs with an embedding and a prompt (issue 58; the GPU comparison with
// sd-scripts' own textual inversion loading reads it: tests/gpu/ti_vs_sdscripts.py), on tiny SD 1.5
// and SDXL checkpoints: the prompt with the token gives the outputs of its ids with the embedding's
// rows set directly on the encoders, other outputs than the prompt without it, and a file of
// another shape or without a key is refused naming the file and the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "models/checkpoints/sd_checkpoint.h"
#include "models/text_encoders/clip_text_model.h"
#include "models/text_encoders/sd_text_encoding.h"
#include "models/text_encoders/sdxl_text_encoding.h"
#include "runner_process.h"
#include "tiny_run_inputs.h"
#include "text/clip_token_chunks.h"
#include "text/clip_tokenizer.h"
#include "train/sd/sd_module_outputs.h"
#include "train/sdxl/sdxl_model_set.h"
#include "train/sdxl/sdxl_module_outputs.h"

namespace fs = std::filesystem;
using namespace sinter;
using sinter::test::ProcessResult;
using sinter::test::runRunner;

namespace {

fs::path g_root;
std::string path(const std::string& rel) { return (g_root / rel).string(); }

const std::string kWithToken = "a red zz zz1 circle", kWithoutToken = "a red circle";

class EmbeddingModuleOutputs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_embedding_outputs_" + std::to_string(::getpid()));
    sinter::test::writeTinyRunInputs(g_root, {"sd15", "sdxl"}, /*dataset=*/false);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

// --module_outputs on `family`'s tiny checkpoint with the embedding `weights` for token "zz" (2 vectors).
ProcessResult moduleOutputs(const std::string& family, const std::string& out, const std::string& weights, const std::string& prompt,
                            const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"--module_outputs", out, "--model_family", family, "--pretrained_model_name_or_path",
                                   path("tiny_" + family + ".safetensors"), "--clip_tokenizer", path("tokenizer"),
                                   "--training_type", "textual_inversion", "--token_string", "zz", "--num_vectors_per_token", "2",
                                   "--weights", weights, "--prompt", prompt};
  args.insert(args.end(), extra.begin(), extra.end());
  return runRunner(args);
}

// Random rows for each encoder's key, [2, width], written as an embedding file.
std::map<std::string, torch::Tensor> writeEmbedding(const std::string& file, const std::map<std::string, int64_t>& widths) {
  torch::manual_seed(11);
  std::map<std::string, torch::Tensor> rows;
  for (const auto& [key, width] : widths) rows[key] = torch::randn({2, width});
  io::writeSafetensors(file, {rows.begin(), rows.end()});
  return rows;
}

std::map<std::string, torch::Tensor> readAll(const std::string& file) {
  io::SafetensorsFile f(file);
  std::map<std::string, torch::Tensor> out;
  for (const std::string& key : f.keys()) out[key] = f.tensor(key);
  return out;
}

// ||a - b|| / ||b||: the runner process and this one may differ in the last bits.
double relativeDifference(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a.to(torch::kDouble) - b.to(torch::kDouble)).norm() / b.to(torch::kDouble).norm()).item<double>();
}

// The tokenizer as a run has it: the tokens of "zz" added after the vocabulary.
text::ClipTokenizer tokenizerWithTokens(std::vector<int32_t>* ids) {
  text::ClipTokenizer tokenizer = text::ClipTokenizer::fromPath(path("tokenizer"));
  *ids = tokenizer.addTokens({"zz", "zz1"});
  return tokenizer;
}

torch::Tensor idsTensor(const std::vector<std::vector<int32_t>>& chunks) { return models::tokenChunksTensor({chunks}).flatten(0, 1); }

bool holds(const torch::Tensor& ids, int32_t id) { return ids.eq(id).any().item<bool>(); }

void expectOutputs(const std::map<std::string, torch::Tensor>& written, const std::map<std::string, torch::Tensor>& expected) {
  for (const auto& [name, tensor] : expected) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(written.count(name));
    ASSERT_EQ(written.at(name).sizes(), tensor.sizes());
    EXPECT_LE(relativeDifference(written.at(name), tensor), 1e-4);
  }
}

}  // namespace

TEST_F(EmbeddingModuleOutputs, SdPromptWithTheTokenIsTheRowsSetDirectly) {
  models::SdCheckpoint models = models::loadSdCheckpoint(path("tiny_sd15.safetensors"));
  models.textEncoder().eval();
  const std::map<std::string, torch::Tensor> rows =
      writeEmbedding(path("sd.safetensors"), {{"emb_params", models.textTransformer()->tokenEmbedding()->weight.size(1)}});
  ASSERT_EQ(moduleOutputs("sd15", path("sd_with.safetensors"), path("sd.safetensors"), kWithToken).exitCode, 0);
  ASSERT_EQ(moduleOutputs("sd15", path("sd_without.safetensors"), path("sd.safetensors"), kWithoutToken).exitCode, 0);
  const std::map<std::string, torch::Tensor> with = readAll(path("sd_with.safetensors")),
                                             without = readAll(path("sd_without.safetensors"));

  // The ids are the prompt's as a run tokenizes it, the two new tokens among them.
  std::vector<int32_t> added;
  const text::ClipTokenizer tokenizer = tokenizerWithTokens(&added);
  const torch::Tensor ids = idsTensor(text::clipTokenChunks(tokenizer, kWithToken, text::ClipPadding::EndOfText, 75));
  ASSERT_TRUE(with.count("input_ids"));
  EXPECT_TRUE(with.at("input_ids").equal(ids));
  EXPECT_TRUE(holds(ids, added[0]) && holds(ids, added[1]));
  EXPECT_FALSE(holds(without.at("input_ids"), added[0]) || holds(without.at("input_ids"), added[1]));

  // The outputs are those of the ids with the file's rows set on the encoder directly.
  models.textTransformer()->setAddedTokenEmbeddings(rows.at("emb_params"));
  const std::map<std::string, torch::Tensor> expected = train::sdModuleOutputs(models, {{"input_ids", ids}});
  ASSERT_EQ(expected.size(), 2u);  // text_clip_skip1, text_clip_skip2
  expectOutputs(with, expected);
  for (const auto& [name, tensor] : expected) EXPECT_GT(relativeDifference(without.at(name), tensor), 1e-2) << name;
}

TEST_F(EmbeddingModuleOutputs, SdxlPromptWithTheTokenIsTheRowsSetDirectly) {
  train::SdxlModelSet models = train::loadSdxlModelSet(path("tiny_sdxl.safetensors"), "");
  models.setTraining(false);
  const std::map<std::string, torch::Tensor> rows =
      writeEmbedding(path("sdxl.safetensors"), {{"clip_l", models.clipL->config().width}, {"clip_g", models.bigG->config().width}});
  ASSERT_EQ(moduleOutputs("sdxl", path("sdxl_with.safetensors"), path("sdxl.safetensors"), kWithToken).exitCode, 0);
  ASSERT_EQ(moduleOutputs("sdxl", path("sdxl_without.safetensors"), path("sdxl.safetensors"), kWithoutToken).exitCode, 0);
  const std::map<std::string, torch::Tensor> with = readAll(path("sdxl_with.safetensors")),
                                             without = readAll(path("sdxl_without.safetensors"));

  // CLIP-L's ids padded with <|endoftext|>, bigG's with 0, as sd-scripts' two tokenizers pad.
  std::vector<int32_t> added;
  const text::ClipTokenizer tokenizer = tokenizerWithTokens(&added);
  const text::SdxlTokenChunks chunks = text::sdxlTokenChunks(tokenizer, kWithToken, 75);
  const torch::Tensor idsL = idsTensor(chunks.clipL), idsG = idsTensor(chunks.bigG);
  ASSERT_TRUE(with.count("input_ids") && with.count("input_ids2"));
  EXPECT_TRUE(with.at("input_ids").equal(idsL));
  EXPECT_TRUE(with.at("input_ids2").equal(idsG));
  EXPECT_FALSE(idsL.equal(idsG));
  EXPECT_TRUE(holds(idsL, added[0]) && holds(idsG, added[1]));

  models.clipL->textModel()->setAddedTokenEmbeddings(rows.at("clip_l"));
  models.bigG->textModel()->setAddedTokenEmbeddings(rows.at("clip_g"));
  std::map<std::string, torch::Tensor> expected = train::sdxlModuleOutputs(models, {{"input_ids", idsL}, {"input_ids2", idsG}});
  {
    torch::NoGradGuard noGrad;
    expected["clip_l_penultimate"] = models.clipL->penultimateHiddenState(idsL);
  }
  ASSERT_EQ(expected.size(), 5u);  // CLIP-L's last layer, after its final norm, and hidden_states[11]; bigG's two
  expectOutputs(with, expected);
  for (const auto& [name, tensor] : expected) EXPECT_GT(relativeDifference(without.at(name), tensor), 1e-2) << name;
}

TEST_F(EmbeddingModuleOutputs, AFileThatDoesNotFitIsRefusedByFileAndKey) {
  // SDXL without clip_g.
  writeEmbedding(path("only_l.safetensors"), {{"clip_l", models::ClipTextConfig::tinyClipL().width}});
  ProcessResult r = moduleOutputs("sdxl", path("no_g_out.safetensors"), path("only_l.safetensors"), kWithToken);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find(path("only_l.safetensors")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("clip_g"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("no_g_out.safetensors")));

  // SD 1.5 with three rows where num_vectors_per_token is 2.
  models::SdCheckpoint models = models::loadSdCheckpoint(path("tiny_sd15.safetensors"));
  const int64_t width = models.textTransformer()->tokenEmbedding()->weight.size(1);
  io::writeSafetensors(path("three.safetensors"), {{"emb_params", torch::randn({3, width})}});
  r = moduleOutputs("sd15", path("three_out.safetensors"), path("three.safetensors"), kWithToken);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find(path("three.safetensors")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("emb_params"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[3, " + std::to_string(width) + "]"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("three_out.safetensors")));
}

TEST_F(EmbeddingModuleOutputs, TheEmbeddingAndThePromptGoWhereTheyApply) {
  // The embedding keys are textual inversion's: another training type does not read them.
  ProcessResult r = runRunner({"--module_outputs", path("lora_out.safetensors"), "--model_family", "sd15", "--pretrained_model_name_or_path",
                               path("tiny_sd15.safetensors"), "--token_string", "zz", "--weights", path("sd.safetensors"), "--prompt",
                               kWithToken});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--training_type textual_inversion"), std::string::npos) << r.err;
  // A family without textual inversion takes token ids, not a prompt.
  r = runRunner({"--module_outputs", path("flux_out.safetensors"), "--model_family", "flux", "--prompt", kWithToken});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--prompt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("flux"), std::string::npos) << r.err;
  // --prompt is the tool's input, not a run's.
  r = runRunner({"--prompt", kWithToken, "--model_family", "sd15"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--module_outputs"), std::string::npos) << r.err;
  for (const char* out : {"lora_out.safetensors", "flux_out.safetensors"}) EXPECT_FALSE(fs::exists(path(out)));
}

// Textual inversion (issue 58) on tiny SD 1.5 and SDXL checkpoints, on the CPU: the new tokens in
// the tokenizer, captions and templates as sd-scripts makes them, only the new embedding rows
// training (every other weight of every model bit-equal after the steps), the embedding files'
// keys, shapes and metadata per family, `weights` read back, resume exact, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "core/toml_config.h"
#include "data/batch_loader.h"
#include "data/batch_plan.h"
#include "data/textual_inversion_captions.h"
#include "io/safetensors.h"
#include "in_process_run.h"
#include "runner_process.h"
#include "tiny_run_inputs.h"
#include "safetensors_compare.h"
#include "text/clip_tokenizer.h"
#include "train/bench/capture_facts.h"
#include "train/loop/run_preflight.h"
#include "train/loop/training_table.h"
#include "train/optim/adamw.h"

namespace fs = std::filesystem;
using namespace sinter;
using namespace sinter::train;
using sinter::test::doneStatus;
using sinter::test::InProcessRun;
using sinter::test::losses;
using sinter::test::ProcessResult;
using sinter::test::runRunner;
using sinter::test::sameTensors;
using sinter::test::writeText;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// A textual inversion config of `family` (sd15, sdxl) writing into `out`.
std::string configText(const std::string& family, const std::string& out, const std::string& extra) {
  return "model_family = \"" + family + "\"\n"
         "training_type = \"textual_inversion\"\n"
         "pretrained_model_name_or_path = \"" + path("tiny_" + family + ".safetensors") + "\"\n"
         "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
         "train_data_dir = \"" + path("images") + "\"\n"
         "output_dir = \"" + path(out) + "\"\n"
         "resolution = \"64,64\"\n"
         "caption_extension = \".txt\"\n"
         "max_data_loader_n_workers = 0\n"
         "learning_rate = 0.01\n"
         "seed = 7\n" + extra;
}

std::string writeConfig(const std::string& name, const std::string& family, const std::string& out, const std::string& extra) {
  writeText(path(name), configText(family, out, extra));
  return path(name);
}

class TextualInversionRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_ti_run_" + std::to_string(::getpid()));
    sinter::test::writeTinyRunInputs(g_root, {"sd15", "sdxl"});
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

Config loadedConfig(const std::string& text) {
  const std::string file = path("in_process.toml");
  writeText(file, text);
  return loadConfigFile(file).config;
}

// Every parameter and buffer of the family's models, copied, by a name that says where it is.
std::map<std::string, torch::Tensor> modelTensors(FamilyPart& family) {
  std::map<std::string, torch::Tensor> out;
  for (const TrainableModel& m : family.trainableModels()) {
    for (const auto& p : m.module->named_parameters(true)) out[m.label + "/" + p.key()] = p.value().detach().clone();
    for (const auto& b : m.module->named_buffers(true)) out[m.label + "/" + b.key()] = b.value().detach().clone();
  }
  return out;
}

// Three optimizer steps of the real family and method parts (what the loop runs, less its
// bookkeeping): the models stay bit-equal, the new rows move, the loss is finite.
void trainsOnlyTheNewRows(const std::string& familyName, const std::vector<std::string>& keys) {
  SCOPED_TRACE(familyName);
  const Config config = loadedConfig(configText(familyName, "out_in_process_" + familyName,
                                                "token_string = \"zz\"\nnum_vectors_per_token = 2\ninit_word = \"red\"\n"
                                                "use_object_template = true\nmax_train_steps = 3\n"));
  InProcessRun in(config);
  ASSERT_TRUE(in.preflight.ok());
  TrainingParts parts = in.makeParts(Tab::TextualInversion);
  const std::map<std::string, torch::Tensor> before = modelTensors(*parts.family);
  parts.method->attach(*parts.family);

  // The tokens are in the tokenizer after the vocabulary, and each encoder's rows start from "red".
  const TextualInversionTargets targets = parts.family->textualInversionTargets();
  ASSERT_EQ(targets.encoders.size(), keys.size());
  const int32_t first = targets.tokenizer->firstAddedId();
  std::vector<int32_t> expected = targets.tokenizer->encode("a photo of");
  expected.insert(expected.end(), {first, first + 1});
  EXPECT_EQ(targets.tokenizer->encode("a photo of zz zz1"), expected);
  EXPECT_EQ(targets.tokenizer->encode("zz1zz"), (std::vector<int32_t>{first + 1, first}));  // the longest first, inside words too
  const std::vector<int32_t> red = targets.tokenizer->encode("red");
  ASSERT_EQ(red.size(), 1u);
  const NamedTensors initial = parts.method->stateTensors();
  ASSERT_EQ(initial.size(), keys.size());
  std::vector<torch::Tensor> start;
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(initial[i].first, "textual_inversion/" + keys[i]);
    const torch::Tensor table = targets.encoders[i].encoder->tokenEmbedding()->weight.detach();
    EXPECT_EQ(table.size(0), first) << keys[i];
    EXPECT_TRUE(initial[i].second.equal(table[red[0]].unsqueeze(0).expand({2, table.size(1)}))) << keys[i];
    start.push_back(initial[i].second.clone());
  }

  parts.family->buildCaches(*in.preflight.dataset, 1);
  parts.family->setTraining(parts.method->trainsTextEncoders());
  AdamW optimizer(parts.method->parameterGroups(), AdamWHyperparameters{});
  const data::BatchPlan plan(*in.preflight.dataset, 7);
  data::LoaderOptions loaderOptions;
  loaderOptions.tokenize = parts.family->captionTokenizer();
  data::BatchLoader loader(*in.preflight.dataset, plan, loaderOptions);
  for (int step = 0; step < 3; ++step) {
    const data::Batch batch = loader.next();
    ASSERT_EQ(batch.captions.size(), 1u);
    EXPECT_NE(batch.captions[0].find("zz zz1"), std::string::npos) << batch.captions[0];  // an object template holds the tokens
    const torch::Tensor loss = parts.family->loss(batch, true);
    EXPECT_TRUE(std::isfinite(loss.item<double>()));
    loss.backward();
    optimizer.step();
    optimizer.zeroGrad();
  }
  // Every weight of every model (the token tables included) is bit-equal; the new rows moved.
  const std::map<std::string, torch::Tensor> after = modelTensors(*parts.family);
  ASSERT_EQ(after.size(), before.size());
  size_t differing = 0;
  for (const auto& [name, t] : before) differing += after.at(name).equal(t) ? 0 : 1;
  EXPECT_EQ(differing, 0u);
  const NamedTensors trained = parts.method->stateTensors();
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_FALSE(trained[i].second.equal(start[i])) << keys[i] << " did not train";

  // `weights`: a file saved now is where another run's rows start.
  const std::string file = path("in_process_" + familyName + ".safetensors");
  parts.method->saveModel(file, SaveStamp{3, 1});
  const Config again =
      loadedConfig(configText(familyName, "out_in_process_again_" + familyName,
                              "token_string = \"zz\"\nnum_vectors_per_token = 2\nmax_train_steps = 1\nweights = \"" + file + "\"\n"));
  InProcessRun in2(again);
  ASSERT_TRUE(in2.preflight.ok());
  TrainingParts parts2 = in2.makeParts(Tab::TextualInversion);
  parts2.method->attach(*parts2.family);
  const NamedTensors continued = parts2.method->stateTensors();
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_TRUE(continued[i].second.equal(trained[i].second)) << keys[i];
}

std::string errorOf(const std::string& config) {
  const ProcessResult r = runRunner({"--config_file", config});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  return r.err;
}

}  // namespace

TEST(TextualInversionCaptions, TemplatesAreSdScriptsListsHoldingTheTokens) {
  data::TextualInversionCaptions c{"zz", 3, true, false};
  EXPECT_EQ(data::textualInversionTokens("zz", 3), (std::vector<std::string>{"zz", "zz1", "zz2"}));
  EXPECT_EQ(c.joinedTokens(), "zz zz1 zz2");
  const data::CaptionReplacement object = *c.captionReplacement();
  EXPECT_EQ(object.from, "");
  ASSERT_EQ(object.to.size(), 27u);  // imagenet_templates_small
  EXPECT_EQ(object.to.front(), "a photo of a zz zz1 zz2");
  EXPECT_EQ(object.to[16], "a rendition of the zz zz1 zz2");
  EXPECT_EQ(object.to.back(), "a photo of a small zz zz1 zz2");
  c.objectTemplate = false, c.styleTemplate = true;
  const data::CaptionReplacement style = *c.captionReplacement();
  ASSERT_EQ(style.to.size(), 19u);  // imagenet_style_templates_small
  EXPECT_EQ(style.to.front(), "a painting in the style of zz zz1 zz2");
  EXPECT_EQ(style.to.back(), "a large painting in the style of zz zz1 zz2");
  c.objectTemplate = true;  // both: the object templates, as sd-scripts' `if use_object_template`
  EXPECT_EQ(c.captionReplacement()->to.size(), 27u);

  // The dataset's caption: one of the templates, picked by the item's generator; the caption's own
  // text is not used.
  data::CaptionSettings settings;
  settings.replacements.push_back(object);
  EXPECT_FALSE(data::captionIsFixed(settings));
  std::set<std::string> picked;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    data::Rng rng(seed);
    const std::string caption = data::processCaption("a red circle", settings, {}, rng);
    EXPECT_NE(std::find(object.to.begin(), object.to.end(), caption), object.to.end()) << caption;
    picked.insert(caption);
  }
  EXPECT_GT(picked.size(), 20u);

  // Without a template: several vectors replace the token string in the caption (and in sample
  // prompts); one vector replaces nothing.
  c.objectTemplate = c.styleTemplate = false;
  data::CaptionSettings replacing;
  replacing.replacements.push_back(*c.captionReplacement());
  data::Rng rng(1);
  EXPECT_EQ(data::processCaption("zz, a red circle", replacing, {}, rng), "zz zz1 zz2, a red circle");
  EXPECT_EQ(c.promptReplacement()->to.front(), "zz zz1 zz2");
  c.vectors = 1;
  EXPECT_FALSE(c.captionReplacement().has_value());
  EXPECT_FALSE(c.promptReplacement().has_value());
}

TEST(TextualInversionTable, FluxAndSd3AreRefusedByName) {
  for (Family f : {Family::SD15, Family::SD2, Family::SDXL}) EXPECT_FALSE(notBuiltReason(f, Tab::TextualInversion)) << toString(f);
  for (Family f : {Family::FLUX, Family::SD3}) {
    const std::optional<std::string> why = notBuiltReason(f, Tab::TextualInversion);
    ASSERT_TRUE(why) << toString(f);
    EXPECT_NE(why->find(std::string(toString(f)) + " has no textual inversion"), std::string::npos) << *why;
    EXPECT_NE(why->find("SD 1.x, SD 2.x and SDXL"), std::string::npos) << *why;
  }
  EXPECT_EQ(tabFromString("textual_inversion"), Tab::TextualInversion);
  // The whole-step capture holds the rows: no barrier, and SDXL's encoders run inside the step.
  Config config;
  config.set("model_family", std::string("sdxl"));
  config.set("training_type", std::string("textual_inversion"));
  const compile::CaptureFacts facts = captureFacts(config, torch::kCPU, 1);
  EXPECT_TRUE(facts.barriers.empty());
  EXPECT_EQ(facts.textEncodersInStep, "CLIP-L and OpenCLIP bigG");
  EXPECT_TRUE(facts.regionBarriers.empty());
}

TEST_F(TextualInversionRun, Sd15TrainsOnlyTheNewRows) { trainsOnlyTheNewRows("sd15", {"emb_params"}); }

TEST_F(TextualInversionRun, SdxlTrainsOnlyTheNewRowsOfBothEncoders) { trainsOnlyTheNewRows("sdxl", {"clip_l", "clip_g"}); }

TEST_F(TextualInversionRun, Sd15FileIsEmbParamsAndResumesExactly) {
  const std::string extra = "token_string = \"zz\"\nnum_vectors_per_token = 2\ninit_word = \"red\"\nuse_object_template = true\n"
                            "max_train_steps = 4\nsave_every_n_steps = 2\nsave_state = true\n";
  const ProcessResult whole = runRunner({"--config_file", writeConfig("sd15_whole.toml", "sd15", "out_sd15", extra), "--events", "jsonl"});
  ASSERT_EQ(whole.exitCode, 0) << whole.err;
  EXPECT_EQ(doneStatus(whole), "completed");
  const std::vector<double> l = losses(whole);
  ASSERT_EQ(l.size(), 4u);
  for (double v : l) EXPECT_TRUE(std::isfinite(v));
  // output_name unset: the token string names the files, as train_textual_inversion.py names them.
  const std::string saved = path("out_sd15/zz.safetensors");
  io::SafetensorsFile f(saved);
  EXPECT_EQ(f.keys(), (std::vector<std::string>{"emb_params"}));
  EXPECT_EQ(f.info("emb_params").shape, (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(f.info("emb_params").dtype, "F32");
  EXPECT_EQ(f.metadata().at("modelspec.architecture"), "stable-diffusion-v1/textual-inversion");
  EXPECT_EQ(f.metadata().at("modelspec.implementation"), "https://github.com/Stability-AI/generative-models");
  EXPECT_EQ(f.metadata().at("modelspec.title"), "zz");
  EXPECT_TRUE(fs::exists(path("out_sd15/zz-step00000002.safetensors")));

  const ProcessResult resumed = runRunner({"--config_file", writeConfig("sd15_resumed.toml", "sd15", "out_sd15_resumed",
                                                                        extra + "resume = \"" + path("out_sd15/zz-step00000002-state") + "\"\n")});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_TRUE(sameTensors(saved, path("out_sd15_resumed/zz.safetensors"), 0.0)) << "resumed differs from the uninterrupted run";
}

TEST_F(TextualInversionRun, SdxlFileIsClipLAndClipGAndSamplesUseTheTokens) {
  writeText(path("prompts.txt"), "a photo of zz --w 64 --h 64 --d 1 --s 2 --n zz\n");
  const std::string cfg = writeConfig("sdxl.toml", "sdxl", "out_sdxl",
                                      "token_string = \"zz\"\nnum_vectors_per_token = 3\ninit_word = \"red circle\"\noutput_name = \"e\"\n"
                                      "max_train_steps = 2\nsave_precision = \"fp16\"\nsample_every_n_steps = 2\nsample_prompts = \"" +
                                          path("prompts.txt") + "\"\n");
  const ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  io::SafetensorsFile f(path("out_sdxl/e.safetensors"));
  EXPECT_EQ(f.keys(), (std::vector<std::string>{"clip_g", "clip_l"}));
  EXPECT_EQ(f.info("clip_l").shape, (std::vector<int64_t>{3, 32}));
  EXPECT_EQ(f.info("clip_g").shape, (std::vector<int64_t>{3, 32}));
  EXPECT_EQ(f.info("clip_l").dtype, "F16");
  EXPECT_EQ(f.metadata().at("modelspec.architecture"), "stable-diffusion-xl-v1-base/textual-inversion");
  // init_word of two tokens for three vectors: repeated, as sd-scripts' init_token_ids[i % len].
  EXPECT_NE(r.err.find("its tokens are repeated or cut to fit"), std::string::npos) << r.err;
  // The sample's prompt and negative prompt got the three tokens (sd-scripts' prompt_replacement).
  EXPECT_NE(r.out.find("a photo of zz zz1 zz2"), std::string::npos) << r.out;
}

TEST_F(TextualInversionRun, RefusalsNameWhatIsWrong) {
  // A token the vocabulary has ("a", a byte of the byte-level vocabulary).
  EXPECT_NE(errorOf(writeConfig("in_vocab.toml", "sd15", "out_refused", "token_string = \"a\"\nmax_train_steps = 1\n"))
                .find("the tokenizer already has the token \"a\""),
            std::string::npos);
  EXPECT_NE(errorOf(writeConfig("no_token.toml", "sd15", "out_refused", "max_train_steps = 1\n")).find("token_string is not set"),
            std::string::npos);
  EXPECT_NE(errorOf(writeConfig("cached.toml", "sdxl", "out_refused",
                                "token_string = \"zz\"\ncache_text_encoder_outputs = true\nmax_train_steps = 1\n"))
                .find("cache_text_encoder_outputs: textual inversion trains"),
            std::string::npos);
  // An embedding of three vectors for a run of two: the file, the key and both shapes.
  const std::string wrong = path("three_vectors.safetensors");
  io::writeSafetensors(wrong, {{"emb_params", torch::zeros({3, 32})}});
  const std::string err = errorOf(writeConfig("bad_weights.toml", "sd15", "out_refused",
                                              "token_string = \"zz\"\nnum_vectors_per_token = 2\nmax_train_steps = 1\nweights = \"" +
                                                  wrong + "\"\n"));
  EXPECT_NE(err.find("emb_params in '" + wrong + "' is [3, 32], this run's emb_params rows are [2, 32]"), std::string::npos) << err;
  // SDXL reads clip_l and clip_g: an SD 1.x file lacks them.
  const std::string sdxlErr = errorOf(writeConfig("sdxl_weights.toml", "sdxl", "out_refused",
                                                  "token_string = \"zz\"\nmax_train_steps = 1\nweights = \"" + wrong + "\"\n"));
  EXPECT_NE(sdxlErr.find("has no clip_l tensor (it holds emb_params)"), std::string::npos) << sdxlErr;
}

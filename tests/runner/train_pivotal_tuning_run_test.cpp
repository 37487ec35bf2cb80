// Pivotal tuning (issue 58, third part) on tiny SD 1.5 and SDXL checkpoints, on the CPU: a LoRA run
// whose `embeddings` also train rows for new tokens, in one optimizer (a group per embedding); the
// LoRA modules and the rows move while every row of the token tables stays bit-equal; the LoRA
// file holds the embeddings in A1111's bundle_emb layout and each is written apart as textual
// inversion writes it; resume is exact; network_weights continues the rows it bundles; the refusals
// name what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "core/toml_config.h"
#include "data/batch_loader.h"
#include "data/batch_plan.h"
#include "data/pivotal_embedding_specs.h"
#include "io/safetensors.h"
#include "in_process_run.h"
#include "runner_process.h"
#include "tiny_run_inputs.h"
#include "safetensors_compare.h"
#include "text/clip_tokenizer.h"
#include "train/loop/run_preflight.h"
#include "train/loop/training_table.h"
#include "train/methods/pivotal_embeddings.h"
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

// Two embeddings: "zz" of two vectors from "red" at its own rate, "qq" of one from the vocabulary's mean.
const std::string kEmbeddings =
    "embeddings = [\"token_string=zz init_word=red num_vectors_per_token=2 learning_rate=0.02\", \"token_string=qq\"]\n";

// A LoRA config of `family` (sd15, sdxl) writing into `out`; captions "zz, qq, ..." (the test images' captions after them).
std::string configText(const std::string& family, const std::string& out, const std::string& extra) {
  return "model_family = \"" + family + "\"\n"
         "training_type = \"lora\"\n"
         "pretrained_model_name_or_path = \"" + path("tiny_" + family + ".safetensors") + "\"\n"
         "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
         "train_data_dir = \"" + path("images") + "\"\n"
         "output_dir = \"" + path(out) + "\"\n"
         "output_name = \"piv\"\n"
         "resolution = \"64,64\"\n"
         "caption_extension = \".txt\"\n"
         "caption_prefix = \"zz, qq, \"\n"
         "network_dim = 4\n"
         "network_alpha = 4\n"
         "max_data_loader_n_workers = 0\n"
         "learning_rate = 0.01\n"
         "seed = 7\n" + extra;
}

std::string writeConfig(const std::string& name, const std::string& family, const std::string& out, const std::string& extra) {
  writeText(path(name), configText(family, out, extra));
  return path(name);
}

class PivotalTuningRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_pivotal_run_" + std::to_string(::getpid()));
    sinter::test::writeTinyRunInputs(g_root, {"sd15", "sdxl"});
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

Config loadedConfig(const std::string& text) {
  const std::string file = path("in_process.toml");
  writeText(file, text);
  return loadConfigFile(file).config;
}

std::map<std::string, torch::Tensor> byName(const NamedTensors& tensors) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, t] : tensors) out[name] = t.detach().clone();
  return out;
}

// Three optimizer steps of the real family and method parts: the LoRA modules and both embeddings'
// rows move, every token table is bit-equal, the captions hold the tokens.
void trainsLoraAndRows(const std::string& familyName, const std::vector<std::string>& keys, const std::string& extra) {
  SCOPED_TRACE(familyName);
  const Config config = loadedConfig(configText(familyName, "out_in_process_" + familyName, kEmbeddings + "max_train_steps = 3\n" + extra));
  InProcessRun in(config);
  ASSERT_TRUE(in.preflight.ok());
  TrainingParts parts = in.makeParts(Tab::LoRA);
  const TextualInversionTargets targets = parts.family->textualInversionTargets();
  ASSERT_EQ(targets.encoders.size(), keys.size());
  std::vector<torch::Tensor> tables;
  for (const TokenEmbeddingTarget& t : targets.encoders) tables.push_back(t.encoder->tokenEmbedding()->weight.detach().clone());
  parts.method->attach(*parts.family);
  EXPECT_TRUE(parts.method->trainsTextEncoders());  // the rows need the encoders' gradient, with or without their LoRA

  // zz, zz1 then qq after the vocabulary; zz's rows start from "red", qq's from the mean.
  const int32_t first = targets.tokenizer->firstAddedId();
  EXPECT_EQ(targets.tokenizer->encode("zz zz1 qq"), (std::vector<int32_t>{first, first + 1, first + 2}));
  const std::vector<int32_t> red = targets.tokenizer->encode("red");
  ASSERT_EQ(red.size(), 1u);
  const std::map<std::string, torch::Tensor> start = byName(parts.method->stateTensors());
  for (size_t i = 0; i < keys.size(); ++i) {
    const torch::Tensor zz = start.at("pivotal_embeddings/zz/" + keys[i]);
    const torch::Tensor qq = start.at("pivotal_embeddings/qq/" + keys[i]);
    EXPECT_TRUE(zz.equal(tables[i][red[0]].unsqueeze(0).expand({2, tables[i].size(1)}))) << keys[i];
    EXPECT_TRUE(torch::allclose(qq, tables[i].mean(0, true), 1e-6, 1e-6)) << keys[i];
    EXPECT_EQ(targets.encoders[i].encoder->addedTokenEmbeddings().size(0), 3) << keys[i];
  }

  // One optimizer: the network's groups, then one per embedding at its rate (qq: learning_rate's, no text_encoder_lr here).
  const std::vector<OptimizerGroup> groups = parts.method->parameterGroups();
  ASSERT_GE(groups.size(), 3u);
  EXPECT_EQ(groups[groups.size() - 2].label, "Embedding zz");
  EXPECT_DOUBLE_EQ(groups[groups.size() - 2].lr, 0.02);
  EXPECT_EQ(groups.back().label, "Embedding qq");
  EXPECT_DOUBLE_EQ(groups.back().lr, 0.01);
  EXPECT_EQ(groups.back().params.size(), keys.size());

  parts.family->buildCaches(*in.preflight.dataset, 1);
  parts.family->setTraining(parts.method->trainsTextEncoders());
  AdamW optimizer(groups, AdamWHyperparameters{});
  const data::BatchPlan plan(*in.preflight.dataset, 7);
  data::LoaderOptions loaderOptions;
  loaderOptions.tokenize = parts.family->captionTokenizer();
  data::BatchLoader loader(*in.preflight.dataset, plan, loaderOptions);
  for (int step = 0; step < 3; ++step) {
    const data::Batch batch = loader.next();
    ASSERT_EQ(batch.captions.size(), 1u);
    EXPECT_EQ(batch.captions[0].rfind("zz zz1, qq, ", 0), 0u) << batch.captions[0];  // zz's two vectors in the caption
    const torch::Tensor loss = parts.family->loss(batch, true);
    EXPECT_TRUE(std::isfinite(loss.item<double>()));
    loss.backward();
    optimizer.step();
    optimizer.zeroGrad();
  }
  for (size_t i = 0; i < keys.size(); ++i)
    EXPECT_TRUE(targets.encoders[i].encoder->tokenEmbedding()->weight.equal(tables[i])) << keys[i] << "'s token table changed";
  const std::map<std::string, torch::Tensor> after = byName(parts.method->stateTensors());
  ASSERT_EQ(after.size(), start.size());
  size_t movedLora = 0;
  for (const auto& [name, t] : after) {
    if (name.rfind("pivotal_embeddings/", 0) == 0)
      EXPECT_FALSE(t.equal(start.at(name))) << name << " did not train";
    else
      movedLora += t.equal(start.at(name)) ? 0 : 1;
  }
  EXPECT_GT(movedLora, 0u) << "no LoRA tensor trained";
}

// The line of `log` holding `text`, or "".
std::string lineWith(const std::string& log, const std::string& text) {
  const size_t at = log.find(text);
  if (at == std::string::npos) return "";
  const size_t begin = log.rfind('\n', at) == std::string::npos ? 0 : log.rfind('\n', at) + 1;
  return log.substr(begin, log.find('\n', at) - begin);
}

std::string errorOf(const std::string& config) {
  const ProcessResult r = runRunner({"--config_file", config});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  return r.err;
}

}  // namespace

TEST(PivotalEmbeddingSpecs, ItemsParseAndBadOnesNameItemAndKey) {
  Config c;
  c.set("embeddings", StringList{"token_string=zz init_word=\"red circle\" num_vectors_per_token=3 weights=\"/a b/e.safetensors\"",
                                 "learning_rate=1e-4 token_string=qq"});
  const std::vector<data::PivotalEmbeddingSpec> specs = data::pivotalEmbeddingSpecs(c);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].initWord, "red circle");
  EXPECT_EQ(specs[0].vectors, 3);
  EXPECT_EQ(specs[0].weightsFile, "/a b/e.safetensors");
  EXPECT_FALSE(specs[0].learningRate.has_value());
  EXPECT_EQ(specs[0].tokens(), (std::vector<std::string>{"zz", "zz1", "zz2"}));
  EXPECT_DOUBLE_EQ(*specs[1].learningRate, 1e-4);
  const std::vector<data::CaptionReplacement> r = data::pivotalCaptionReplacements(specs);
  ASSERT_EQ(r.size(), 1u);  // qq has one vector: nothing to replace
  EXPECT_EQ(r[0].from, "zz");
  EXPECT_EQ(r[0].to, (std::vector<std::string>{"zz zz1 zz2"}));

  const auto errorFor = [](StringList items) {
    Config bad;
    bad.set("embeddings", std::move(items));
    try {
      data::pivotalEmbeddingSpecs(bad);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(errorFor({"token_string=zz", "token_string=zz"}),
            "embeddings item 2: the token \"zz\" is another embedding's too (token_string \"zz\" with 1 vectors makes zz)");
  EXPECT_NE(errorFor({"token_string=zz num_vectors_per_token=2", "token_string=zz1"}).find("item 2: the token \"zz1\" is another"),
            std::string::npos);
  EXPECT_NE(errorFor({"token_string=zz init=red"}).find("embeddings item 1: unknown key 'init'"), std::string::npos);
  EXPECT_NE(errorFor({"init_word=red"}).find("embeddings item 1: token_string is not set"), std::string::npos);
  EXPECT_NE(errorFor({"token_string=z.z"}).find("holds a space or a '.'"), std::string::npos);
  EXPECT_NE(errorFor({"token_string=zz num_vectors_per_token=0"}).find("num_vectors_per_token = 0 is not a whole number"), std::string::npos);
  EXPECT_NE(errorFor({"token_string=zz learning_rate=fast"}).find("learning_rate = \"fast\" is not a number"), std::string::npos);
  EXPECT_NE(errorFor({"token_string zz"}).find("\"token_string\" is not key=value"), std::string::npos);
}

TEST(PivotalEmbeddingSpecs, FluxAndSd3AreRefusedByName) {
  for (const char* family : {"flux", "sd3"}) {
    Config c;
    c.set("model_family", std::string(family));
    c.set("training_type", std::string("lora"));
    c.set("embeddings", StringList{"token_string=zz"});
    const std::optional<Refusal> why = pivotalEmbeddingsRefusal(c, false);
    ASSERT_TRUE(why) << family;
    EXPECT_EQ(why->key, "embeddings");
    EXPECT_NE(why->message.find(std::string(toString(*c.family())) + " is not built for (SD 1.x, SD 2.x and SDXL"), std::string::npos)
        << why->message;
  }
}

TEST_F(PivotalTuningRun, Sd15TrainsTheLoraAndTheRows) { trainsLoraAndRows("sd15", {"emb_params"}, ""); }

// The text encoders' LoRA off: they still run with gradients, to the rows.
TEST_F(PivotalTuningRun, SdxlTrainsTheRowsOfBothEncodersWithUnetOnlyLora) {
  trainsLoraAndRows("sdxl", {"clip_l", "clip_g"}, "network_train_unet_only = true\n");
}

TEST_F(PivotalTuningRun, Sd15FilesBundleTheEmbeddingsAndResumeExactly) {
  const std::string extra = kEmbeddings + "max_train_steps = 4\nsave_every_n_steps = 2\nsave_state = true\n";
  const ProcessResult whole = runRunner({"--config_file", writeConfig("sd15_whole.toml", "sd15", "out_sd15", extra), "--events", "jsonl"});
  ASSERT_EQ(whole.exitCode, 0) << whole.err;
  EXPECT_EQ(doneStatus(whole), "completed");
  for (double v : losses(whole)) EXPECT_TRUE(std::isfinite(v));
  io::SafetensorsFile lora(path("out_sd15/piv.safetensors"));
  size_t loraKeys = 0, textEncoderKeys = 0;
  for (const std::string& k : lora.keys()) {
    loraKeys += k.rfind("lora_", 0) == 0 ? 1 : 0;
    textEncoderKeys += k.rfind("lora_te_", 0) == 0 ? 1 : 0;
  }
  EXPECT_GT(loraKeys, 0u);
  EXPECT_GT(textEncoderKeys, 0u);
  EXPECT_EQ(lora.info("bundle_emb.zz.string_to_param.*").shape, (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(lora.info("bundle_emb.qq.string_to_param.*").shape, (std::vector<int64_t>{1, 32}));
  EXPECT_EQ(loraKeys + 2, lora.keys().size());  // nothing else
  EXPECT_EQ(lora.metadata().at("ss_network_module"), "networks.lora");
  // Each apart, as textual inversion writes it, with the same rows.
  for (const char* token : {"zz", "qq"}) {
    io::SafetensorsFile apart(path(std::string("out_sd15/piv_") + token + ".safetensors"));
    EXPECT_EQ(apart.keys(), (std::vector<std::string>{"emb_params"}));
    EXPECT_EQ(apart.metadata().at("modelspec.architecture"), "stable-diffusion-v1/textual-inversion");
    EXPECT_EQ(apart.metadata().at("modelspec.title"), token);
    EXPECT_TRUE(apart.tensor("emb_params").equal(lora.tensor(std::string("bundle_emb.") + token + ".string_to_param.*"))) << token;
  }
  EXPECT_TRUE(fs::exists(path("out_sd15/piv-step00000002_zz.safetensors")));

  const ProcessResult resumed = runRunner({"--config_file", writeConfig("sd15_resumed.toml", "sd15", "out_sd15_resumed",
                                                                        extra + "resume = \"" + path("out_sd15/piv-step00000002-state") + "\"\n")});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_TRUE(sameTensors(path("out_sd15/piv.safetensors"), path("out_sd15_resumed/piv.safetensors"), 0.0)) << "resumed differs";
  EXPECT_TRUE(sameTensors(path("out_sd15/piv_zz.safetensors"), path("out_sd15_resumed/piv_zz.safetensors"), 0.0));
}

TEST_F(PivotalTuningRun, SdxlFileHasClipLAndClipGBundlesAndSamplesUseTheTokens) {
  writeText(path("prompts.txt"), "a photo of zz with qq --w 64 --h 64 --d 1 --s 2 --n zz\n");
  const std::string cfg = writeConfig("sdxl.toml", "sdxl", "out_sdxl",
                                      kEmbeddings + "network_train_unet_only = true\nmax_train_steps = 2\nsave_precision = \"fp16\"\n"
                                                    "sample_every_n_steps = 2\nsample_prompts = \"" + path("prompts.txt") + "\"\n");
  const ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  io::SafetensorsFile lora(path("out_sdxl/piv.safetensors"));
  for (const std::string& k : lora.keys()) EXPECT_NE(k.rfind("lora_te", 0), 0u) << k << ": network_train_unet_only";
  EXPECT_EQ(lora.info("bundle_emb.zz.clip_l").shape, (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(lora.info("bundle_emb.zz.clip_g").shape, (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(lora.info("bundle_emb.qq.clip_l").shape, (std::vector<int64_t>{1, 32}));
  EXPECT_EQ(lora.info("bundle_emb.zz.clip_l").dtype, "F16");
  io::SafetensorsFile apart(path("out_sdxl/piv_zz.safetensors"));
  EXPECT_EQ(apart.keys(), (std::vector<std::string>{"clip_g", "clip_l"}));
  EXPECT_EQ(apart.metadata().at("modelspec.architecture"), "stable-diffusion-xl-v1-base/textual-inversion");
  EXPECT_NE(r.out.find("a photo of zz zz1 with qq"), std::string::npos) << r.out;
}

TEST_F(PivotalTuningRun, RefusalsNameWhatIsWrong) {
  EXPECT_NE(errorOf(writeConfig("in_vocab.toml", "sd15", "out_refused", "embeddings = [\"token_string=a\"]\nmax_train_steps = 1\n"))
                .find("embeddings: the tokenizer already has the token \"a\""),
            std::string::npos);
  EXPECT_NE(errorOf(writeConfig("dup.toml", "sd15", "out_refused", "embeddings = [\"token_string=zz\", \"token_string=zz\"]\nmax_train_steps = 1\n"))
                .find("embeddings item 2: the token \"zz\" is another embedding's too"),
            std::string::npos);
  EXPECT_NE(errorOf(writeConfig("cached.toml", "sdxl", "out_refused",
                                kEmbeddings + "network_train_unet_only = true\ncache_text_encoder_outputs = true\nmax_train_steps = 1\n"))
                .find("cache_text_encoder_outputs: the embeddings train the text encoders' rows"),
            std::string::npos);
  const std::string wrong = path("three_vectors.safetensors");
  io::writeSafetensors(wrong, {{"emb_params", torch::zeros({3, 32})}});
  const std::string err = errorOf(writeConfig("bad_weights.toml", "sd15", "out_refused",
                                              "embeddings = [\"token_string=zz num_vectors_per_token=2 weights=" + wrong +
                                                  "\"]\nmax_train_steps = 1\n"));
  EXPECT_NE(err.find("emb_params in '" + wrong + "' is [3, 32], this run's emb_params rows are [2, 32]"), std::string::npos) << err;
}

TEST_F(PivotalTuningRun, OldSavesTakeTheirEmbeddingFilesWithThem) {
  const ProcessResult r = runRunner({"--config_file", writeConfig("last_n.toml", "sd15", "out_last_n",
                                                                  kEmbeddings + "max_train_steps = 4\nsave_every_n_steps = 1\n"
                                                                                "save_last_n_steps = 1\n")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // Step 3's save removes step 1's (sd-scripts' remove_step_no); the last step saves the final file only.
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(path("out_last_n")))
    if (entry.path().extension() == ".safetensors") files.insert(entry.path().filename().string());
  const std::set<std::string> expected{"piv-step00000002.safetensors", "piv-step00000002_zz.safetensors", "piv-step00000002_qq.safetensors",
                                       "piv-step00000003.safetensors", "piv-step00000003_zz.safetensors", "piv-step00000003_qq.safetensors",
                                       "piv.safetensors",              "piv_zz.safetensors",              "piv_qq.safetensors"};
  EXPECT_EQ(files, expected);
}

// network_weights continues a pivotal run from its own LoRA file (★ beyond sd-scripts, which passes
// bundle_emb over): an embedding whose token the file bundles starts from those rows bit for bit,
// one it lacks from init_word, and an item's own `weights` wins over the bundle; rows of another
// shape are refused naming the file, the key and both shapes.
TEST_F(PivotalTuningRun, NetworkWeightsStartsEachEmbeddingFromItsBundledRows) {
  const ProcessResult first =
      runRunner({"--config_file", writeConfig("sd15_first.toml", "sd15", "out_sd15_first", kEmbeddings + "max_train_steps = 2\n")});
  ASSERT_EQ(first.exitCode, 0) << first.err;
  const std::string lora = path("out_sd15_first/piv.safetensors");
  io::SafetensorsFile file(lora);
  const std::string own = path("qq_own.safetensors");
  io::writeSafetensors(own, {{"emb_params", torch::full({1, 32}, 0.25)}});
  const std::string continued = "network_weights = \"" + lora + "\"\nmax_train_steps = 1\n";

  // In process, right after attach: zz from the file, kx (not in it) from "red", qq from its own file.
  const Config config = loadedConfig(configText(
      "sd15", "out_continued_in_process",
      continued + "embeddings = [\"token_string=zz num_vectors_per_token=2\", \"token_string=kx init_word=red\", "
                  "\"token_string=qq weights=" + own + "\"]\n"));
  InProcessRun in(config);
  ASSERT_TRUE(in.preflight.ok());
  TrainingParts parts = in.makeParts(Tab::LoRA);
  const TextualInversionTargets targets = parts.family->textualInversionTargets();
  const torch::Tensor table = targets.encoders[0].encoder->tokenEmbedding()->weight.detach().clone();
  const std::vector<int32_t> red = targets.tokenizer->encode("red");
  ASSERT_EQ(red.size(), 1u);
  parts.method->attach(*parts.family);
  const std::map<std::string, torch::Tensor> start = byName(parts.method->stateTensors());
  const torch::Tensor zz = file.tensor("bundle_emb.zz.string_to_param.*");
  EXPECT_TRUE(start.at("pivotal_embeddings/zz/emb_params").equal(zz));
  EXPECT_FALSE(zz.equal(table[red[0]].unsqueeze(0).expand({2, 32}))) << "the first run's rows did not train";
  EXPECT_TRUE(start.at("pivotal_embeddings/kx/emb_params").equal(table[red[0]].unsqueeze(0)));
  EXPECT_TRUE(start.at("pivotal_embeddings/qq/emb_params").equal(torch::full({1, 32}, 0.25)));
  // The LoRA modules came from the file too.
  size_t sameAsFile = 0;
  for (const auto& [name, t] : start)
    if (name.rfind("pivotal_embeddings/", 0) != 0 && file.has(name)) sameAsFile += t.equal(file.tensor(name)) ? 1 : 0;
  EXPECT_GT(sameAsFile, 0u);

  // The runner says where each started; the keys of a token the run has no embedding for (qq) are the only ones not loaded.
  const ProcessResult r = runRunner({"--config_file", writeConfig("sd15_continued.toml", "sd15", "out_continued",
                                                                  continued + "embeddings = [\"token_string=zz num_vectors_per_token=2\", "
                                                                              "\"token_string=kx init_word=red\"]\n")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string log = r.out + r.err;
  EXPECT_NE(lineWith(log, "embedding \"zz\"").find(", from the rows network_weights' " + lora + " bundles"), std::string::npos) << log;
  EXPECT_NE(lineWith(log, "embedding \"kx\"").find(", from \"red\" (network_weights' " + lora + " bundles no rows for it)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("(bundle_emb.qq.string_to_param.*); they are not loaded"), std::string::npos) << log;
  EXPECT_EQ(log.find("bundle_emb.zz"), std::string::npos) << log;

  const std::string err = errorOf(writeConfig("sd15_three.toml", "sd15", "out_refused",
                                              continued + "embeddings = [\"token_string=zz num_vectors_per_token=3\"]\n"));
  EXPECT_NE(err.find("network_weights: bundle_emb.zz.string_to_param.* in '" + lora +
                     "' is [2, 32], this run's bundle_emb.zz.string_to_param.* rows are [3, 32]"),
            std::string::npos)
      << err;
}

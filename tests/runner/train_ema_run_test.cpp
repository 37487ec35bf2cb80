// The EMA of the trained weights (ema_decay) end to end through the real sinter-runner on the tiny
// SDXL checkpoint, on the CPU: with a save after every step, each <name>-ema.safetensors equals the
// decay rule computed in float64 from the trained weights of the files saved beside it (LoRA with the
// EMA in host memory and the warm-up; DreamBooth's float32 masters with it beside them and without);
// the EMA file is the model's format with its metadata and differs from it; training is the same as
// without EMA, sample images included; a resumed state continues the EMA exactly, and a state without
// one starts it from the resumed weights, saying so; bad settings are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/events.h"
#include "io/safetensors.h"
#include "runner_process.h"

namespace fs = std::filesystem;
using sinter::test::eventsOfType;
using sinter::test::expectRefusedBeforeLoading;
using sinter::test::losses;
using sinter::test::ProcessResult;
using sinter::test::readText;
using sinter::test::runRunner;
using sinter::test::writeText;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// The tiny SDXL checkpoint on the generated images; LoRA unless `extra` says otherwise.
std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& extra) {
  writeText(path(name), "model_family = \"sdxl\"\npretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n"
                        "clip_tokenizer = \"" + path("tokenizer") + "\"\ntrain_data_dir = \"" + path("images") + "\"\n"
                        "output_dir = \"" + outputDir + "\"\noutput_name = \"t\"\nresolution = \"128,128\"\n"
                        "caption_extension = \".txt\"\nmax_data_loader_n_workers = 0\nseed = 7\n" + extra);
  return path(name);
}

const std::string kLora = "network_dim = 4\nnetwork_alpha = 4.0\nlearning_rate = 0.01\nsave_precision = \"float\"\n";
const std::string kDreamBooth = "training_type = \"dreambooth\"\nlearning_rate = 0.001\nmixed_precision = \"bf16\"\nsave_precision = \"float\"\n";

// "<dir>/t-step0000000N.safetensors", the last step's "<dir>/t.safetensors".
std::string stepFile(const std::string& dir, long long step, long long last) {
  if (step == last) return dir + "/t.safetensors";
  char name[64];
  std::snprintf(name, sizeof name, "/t-step%08lld.safetensors", step);
  return dir + name;
}

std::string emaOf(const std::string& file) { return file.substr(0, file.size() - 12) + "-ema.safetensors"; }

// The floating-point tensors of a file whose keys start with `prefix`, in float64.
std::map<std::string, torch::Tensor> floatTensors(const std::string& file, const std::string& prefix = "") {
  sinter::io::SafetensorsFile f(file);
  std::map<std::string, torch::Tensor> out;
  for (const std::string& k : f.keys())
    if (k.rfind(prefix, 0) == 0 && f.tensor(k).is_floating_point()) out[k] = f.tensor(k).to(torch::kFloat64);
  return out;
}

double maxDifference(const std::map<std::string, torch::Tensor>& a, const std::map<std::string, torch::Tensor>& b) {
  double worst = 0;
  for (const auto& [k, t] : a) {
    auto it = b.find(k);
    if (it == b.end()) return INFINITY;
    worst = std::max(worst, (t - it->second).abs().max().item<double>());
  }
  return a.size() == b.size() ? worst : INFINITY;
}

// ema_decay's rule in float64 over the weights saved after steps 1..last: from the weights before
// step 1 (`start`), after every `every`-th step ema = beta ema + (1 - beta) w, with the warm-up's
// beta = min(decay, (1 + k) / (10 + k)) at the k-th update (k from 0). Each step's EMA file must
// equal it on the tensors of `start` (those whose keys start with `prefix`).
void expectTheRule(const std::string& dir, const std::map<std::string, torch::Tensor>& start, long long last, long long every, double decay,
                   bool warmup, const std::string& prefix = "") {
  std::map<std::string, torch::Tensor> reference = start;
  long long k = 0;
  for (long long s = 1; s <= last; ++s) {
    const std::map<std::string, torch::Tensor> trained = floatTensors(stepFile(dir, s, last), prefix);
    if (s % every == 0) {
      const double beta = warmup ? std::min(decay, (1.0 + k) / (10.0 + k)) : decay;
      ++k;
      for (auto& [key, e] : reference) e = beta * e + (1.0 - beta) * trained.at(key);
    }
    EXPECT_LE(maxDifference(floatTensors(emaOf(stepFile(dir, s, last)), prefix), reference), 2e-6) << "step " << s;
  }
}

class EmaRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_ema_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

// LoRA, the EMA in host memory (averaged on its own thread), updated every second step with the
// warm-up; a save and a state after every step; samples from the EMA in between.
TEST_F(EmaRun, LoraEmaFilesFollowTheRuleAndResumeContinuesThem) {
  writeText(path("prompts.txt"), "a red square --w 64 --h 64 --d 5 --s 2\n");
  const std::string ema = "ema_decay = 0.2\nema_update_every = 2\nema_device = \"cpu\"\n";
  const std::string saves = "max_train_steps = 6\nsave_every_n_steps = 1\nsave_state = true\n";
  const std::string samples = "sample_prompts = \"" + path("prompts.txt") + "\"\nsample_every_n_steps = 3\n";
  const ProcessResult r = runRunner({"--config_file", writeConfig("lora.toml", path("out_lora"), kLora + saves + ema + samples), "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string dir = path("out_lora");

  // Step 1 does not update (every second step): its EMA file is the weights the run started from.
  const auto start = floatTensors(emaOf(stepFile(dir, 1, 6)));
  EXPECT_GT(maxDifference(start, floatTensors(stepFile(dir, 1, 6))), 0.0);
  // The starting point checked apart from the file under test: a new LoRA's up factors are zero.
  int ups = 0;
  for (const auto& [key, tensor] : start)
    if (key.find("lora_up") != std::string::npos) {
      ++ups;
      EXPECT_EQ(tensor.abs().max().item<double>(), 0.0) << key;
    }
  EXPECT_GT(ups, 0);
  expectTheRule(dir, start, 6, 2, 0.2, /*warmup=*/true);  // the decay caps the warm-up at the third update
  EXPECT_EQ(maxDifference(floatTensors(emaOf(stepFile(dir, 3, 6))), floatTensors(emaOf(stepFile(dir, 2, 6)))), 0.0);

  // The EMA file is a kohya LoRA as the model file is: the same keys, dtypes and metadata keys.
  sinter::io::SafetensorsFile model(dir + "/t.safetensors"), average(dir + "/t-ema.safetensors");
  EXPECT_EQ(model.keys(), average.keys());
  for (const std::string& k : model.keys()) EXPECT_EQ(model.info(k).dtype, average.info(k).dtype) << k;
  std::vector<std::string> modelMeta, averageMeta;
  for (const auto& kv : model.metadata()) modelMeta.push_back(kv.first);
  for (const auto& kv : average.metadata()) averageMeta.push_back(kv.first);
  EXPECT_EQ(modelMeta, averageMeta);
  EXPECT_EQ(average.metadata().at("ss_steps"), model.metadata().at("ss_steps"));
  EXPECT_GT(maxDifference(floatTensors(dir + "/t.safetensors"), floatTensors(dir + "/t-ema.safetensors")), 1e-4);

  // Each EMA file has its saved event; each state holds the EMA; the samples show it.
  std::vector<std::string> emaSaved;
  for (const auto& s : eventsOfType<sinter::events::Saved>(r))
    if (s.kind == "ema") emaSaved.push_back(s.path);
  ASSERT_EQ(emaSaved.size(), 6u) << r.err;
  EXPECT_EQ(emaSaved.back(), dir + "/t-ema.safetensors");
  EXPECT_TRUE(fs::exists(dir + "/t-step00000003-state/ema.safetensors"));
  const auto images = eventsOfType<sinter::events::Sample>(r);
  ASSERT_EQ(images.size(), 2u) << r.err;
  EXPECT_NE(readText(images[0].path).find("\"ema\":true"), std::string::npos);
  EXPECT_NE(r.err.find("generating sample images at step 3 from the EMA of the weights"), std::string::npos) << r.err;

  // Training is what it is without EMA (and without its samples): the same losses, the same LoRA.
  const ProcessResult plain = runRunner({"--config_file", writeConfig("plain.toml", path("out_plain"), kLora + "max_train_steps = 6\n"), "--events", "jsonl"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(losses(plain), losses(r));
  EXPECT_EQ(maxDifference(floatTensors(path("out_plain/t.safetensors")), floatTensors(dir + "/t.safetensors")), 0.0);
  EXPECT_FALSE(fs::exists(path("out_plain/t-ema.safetensors")));

  // Resumed after step 3, the EMA goes on from the state's: the same EMA at the end.
  const std::string resumeFrom = "resume = \"" + dir + "/t-step00000003-state\"\n";
  const ProcessResult resumed =
      runRunner({"--config_file", writeConfig("resumed.toml", path("out_resumed"), kLora + "max_train_steps = 6\n" + ema + resumeFrom)});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("the EMA of the weights continues from"), std::string::npos) << resumed.err;
  EXPECT_LE(maxDifference(floatTensors(path("out_resumed/t-ema.safetensors")), floatTensors(dir + "/t-ema.safetensors")), 1e-6);

  // A state without an EMA: it starts from the resumed weights (step 5 does not update), and the log says so.
  fs::copy(dir + "/t-step00000004-state", path("bare-state"), fs::copy_options::recursive);
  fs::remove(path("bare-state/ema.safetensors"));
  const ProcessResult bare = runRunner({"--config_file", writeConfig("bare.toml", path("out_bare"), kLora + "max_train_steps = 5\n" + ema +
                                                                      "resume = \"" + path("bare-state") + "\"\n"),
                                        "--events", "jsonl"});
  ASSERT_EQ(bare.exitCode, 0) << bare.err;
  EXPECT_NE(bare.err.find("holds no EMA of the weights (saved without ema_decay): the EMA starts from the resumed weights"),
            std::string::npos) << bare.err;
  EXPECT_FALSE(eventsOfType<sinter::events::Warning>(bare).empty());
  EXPECT_EQ(maxDifference(floatTensors(path("out_bare/t-ema.safetensors")), floatTensors(stepFile(dir, 4, 6))), 0.0);
}

// DreamBooth: float32 masters computed through bf16 copies, the EMA beside them, every step, no
// warm-up; samples from the EMA, and the trained checkpoint is the one a run without EMA makes.
TEST_F(EmaRun, DreamBoothEmaFilesFollowTheRuleAndLeaveTrainingAlone) {
  writeText(path("db_prompts.txt"), "a red square --w 64 --h 64 --d 5 --s 2\n");
  const std::string ema = "ema_decay = 0.5\nema_update_every = 1\nema_warmup = false\n";
  const std::string extra = kDreamBooth + "max_train_steps = 3\n";
  const ProcessResult r = runRunner({"--config_file",
                                     writeConfig("db.toml", path("out_db"), extra + "save_every_n_steps = 1\n" + ema + "sample_prompts = \"" +
                                                                              path("db_prompts.txt") + "\"\nsample_every_n_steps = 2\n"),
                                     "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string dir = path("out_db");
  // The U-Net trains from the checkpoint's weights (the frozen models are saved in bf16, as trained).
  const std::string unet = "model.diffusion_model.";
  const std::map<std::string, torch::Tensor> start = floatTensors(path("tiny_sdxl.safetensors"), unet);
  ASSERT_FALSE(start.empty());
  expectTheRule(dir, start, 3, 1, 0.5, /*warmup=*/false, unet);
  sinter::io::SafetensorsFile model(dir + "/t.safetensors"), average(dir + "/t-ema.safetensors");
  EXPECT_EQ(model.keys(), average.keys());
  EXPECT_EQ(model.metadata().size(), average.metadata().size());
  EXPECT_EQ(eventsOfType<sinter::events::Sample>(r).size(), 1u);

  const ProcessResult plain = runRunner({"--config_file", writeConfig("db_plain.toml", path("out_db_plain"), extra), "--events", "jsonl"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(losses(plain), losses(r));
  EXPECT_EQ(maxDifference(floatTensors(path("out_db_plain/t.safetensors")), floatTensors(dir + "/t.safetensors")), 0.0);
}

TEST_F(EmaRun, BadSettingsAreRefusedNamingTheKey) {
  const std::string base = kLora + "max_train_steps = 2\n";
  // The dry run names the key; so does the run, before it loads anything.
  auto dryRunRefuses = [&](const std::string& name, const std::string& extra, const std::string& says) {
    const ProcessResult r = runRunner({"--config_file", writeConfig(name + ".toml", path("out_" + name), base + extra), "--dry_run"});
    EXPECT_EQ(r.exitCode, 2) << name << ":\n" << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << name << " should mention " << says << ":\n" << r.err;
  };
  dryRunRefuses("decay_one", "ema_decay = 1.0\n", "ema_decay = 1: the decay must be below 1");
  dryRunRefuses("decay_above", "ema_decay = 1.5\n", "ema_decay");
  dryRunRefuses("no_update", "ema_decay = 0.99\nema_update_every = 0\n", "ema_update_every");
  dryRunRefuses("device", "ema_decay = 0.99\nema_device = \"tpu\"\n", "ema_device");
  expectRefusedBeforeLoading("decay of 1 (run)", {"--config_file", writeConfig("bad_run.toml", path("out_bad_run"), base + "ema_decay = 1.0\n")},
                             "ema_decay = 1: the decay must be below 1", path("out_bad_run"));
}

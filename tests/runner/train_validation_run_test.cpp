// validation_split end to end through the real sinter-runner on the tiny SDXL checkpoint (and the
// tiny FLUX.1-dev files), on the CPU: validation events after the right steps and epochs, the pass's size, training losses and
// weights identical to a run on the training images alone, ss_* metadata, bad values refused;
// and the fixed validation timesteps (sd-scripts' linspace).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/config.h"
#include "core/events.h"
#include "data/dataset.h"
#include "data/dataset_settings.h"
#include "io/safetensors.h"
#include "runner_process.h"
#include "train/objectives/validation_timesteps.h"

namespace fs = std::filesystem;
using sinter::test::writeText;
using sinter::test::doneStatus;
using sinter::test::eventsOfType;
using sinter::test::losses;
using sinter::test::ProcessResult;
using sinter::test::runRunner;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// The tiny model of `family` on `dataDir` (folder mode, one repeat, batch size 1: 9 batches an
// epoch when 9 of the 12 images train); `extra` lines are appended.
std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& dataDir,
                        const std::string& extra, const std::string& family = "sdxl") {
  const std::string model =
      family == "sdxl" ? "pretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n"
                       : "pretrained_model_name_or_path = \"" + path("flux/flux1-dev.safetensors") + "\"\n"
                         "ae = \"" + path("flux/ae.safetensors") + "\"\nclip_l = \"" + path("flux/clip_l.safetensors") + "\"\n"
                         "t5xxl = \"" + path("flux/t5xxl_fp16.safetensors") + "\"\nt5_tokenizer = \"" + path("tokenizer") + "\"\n"
                         "t5xxl_max_token_length = 16\n";
  const std::string text = "model_family = \"" + family + "\"\n" + model +
                           "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
                           "train_data_dir = \"" + dataDir + "\"\n"
                           "output_dir = \"" + outputDir + "\"\n"
                           "output_name = \"t\"\n"
                           "resolution = \"128,128\"\n"
                           "enable_bucket = true\n"
                           "min_bucket_reso = 64\n"
                           "max_bucket_reso = 256\n"
                           "bucket_reso_steps = 32\n"
                           "caption_extension = \".txt\"\n"
                           "max_data_loader_n_workers = 0\n"
                           "network_dim = 4\n"
                           "network_alpha = 4.0\n"
                           "learning_rate = 0.01\n"
                           "seed = 7\n" + extra;
  const std::string p = path(name);
  writeText(p, text);
  return p;
}

// The images (with their captions) of the generated dataset, in a "1_demo shapes" folder under
// `dir`; `keep` (when not empty) chooses which.
void copyDataset(const std::string& dir, const std::set<std::string>& keep = {}) {
  const fs::path to = fs::path(dir) / "1_demo shapes";
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(path("images/10_demo shapes"))) {
    const std::string stem = entry.path().stem().string();
    if (keep.empty() || keep.count(stem)) fs::copy_file(entry.path(), to / entry.path().filename(), fs::copy_options::overwrite_existing);
  }
}

// Which images the run holds out: the runner's own split of the same folder with the same seed.
std::set<std::string> heldOutStems(const std::string& dataDir, double split, std::uint64_t seed) {
  using namespace sinter;
  std::vector<std::string> warnings;
  data::ParamLayer cmd;
  cmd["resolution"] = {std::string("128,128"), {}};
  cmd["validation_split"] = {split, {}};
  data::DiscoveryOptions options;
  options.validationSeed = seed;
  const data::Dataset d =
      data::buildDataset(data::resolveDatasetSettings(nullptr, data::folderModeSubsets(dataDir, "", warnings), cmd), options);
  std::set<std::string> out;
  for (const data::ImageEntry& e : d.images)
    if (e.validation) out.insert(fs::path(e.path).stem().string());
  return out;
}

class ValidationRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_validation_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("flux/flux1-dev.safetensors"), "--model_family", "flux", "--model_size", "tiny",
                         "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
    copyDataset(path("all"));
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST(ValidationTimesteps, NumpyLinspaceWithoutItsEnds) {
  using sinter::train::validationTimesteps;
  EXPECT_EQ(validationTimesteps(0, 1000), (std::vector<int64_t>{200, 400, 600, 800}));
  EXPECT_EQ(validationTimesteps(100, 900), (std::vector<int64_t>{260, 420, 580, 740}));
  // np.linspace(0, 999, 6, dtype=int)[1:-1]: 199.8, 399.6, 599.4, 799.2 truncated.
  EXPECT_EQ(validationTimesteps(0, 999), (std::vector<int64_t>{199, 399, 599, 799}));
  EXPECT_EQ(validationTimesteps(10, 20), (std::vector<int64_t>{12, 14, 16, 18}));
}

TEST_F(ValidationRun, EventsAfterTheRightStepsAndTrainingIsThatOfTheTrainingImagesAlone) {
  const std::string cfg = writeConfig("val.toml", path("out_val"), path("all"),
                                      "max_train_steps = 10\nvalidation_split = 0.25\nvalidate_every_n_steps = 4\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  // 12 images, 9 train: an epoch is 9 steps. Steps 4 and 8 (every 4), the end of epoch 1 (step 9)
  // and the end of training in epoch 2 (step 10).
  const auto v = eventsOfType<sinter::events::Validation>(r);
  ASSERT_EQ(v.size(), 4u) << r.err;
  const long long steps[] = {4, 8, 9, 10}, epochs[] = {1, 1, 1, 2};
  const char* kinds[] = {"step", "step", "epoch", "epoch"};
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].step, steps[i]);
    EXPECT_EQ(v[i].epoch, epochs[i]);
    EXPECT_EQ(v[i].kind, kinds[i]);
    EXPECT_TRUE(std::isfinite(v[i].loss) && v[i].loss > 0) << v[i].loss;
  }
  EXPECT_NE(v[0].loss, v[1].loss);  // the same noise and images, other weights
  EXPECT_NE(r.err.find("validation: 3 batches x 4 timesteps per pass"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("num validation images * repeats: 3"), std::string::npos) << r.err;
  // Each validation event follows its step's event.
  long long lastStep = 0;
  for (const auto& e : sinter::test::eventsOf(r)) {
    if (const auto* s = std::get_if<sinter::events::Step>(&e)) lastStep = s->step;
    if (const auto* val = std::get_if<sinter::events::Validation>(&e)) EXPECT_EQ(val->step, lastStep);
  }
  sinter::io::SafetensorsFile lora(path("out_val/t.safetensors"));
  EXPECT_EQ(lora.metadata().at("ss_num_validation_images"), "3");
  EXPECT_EQ(lora.metadata().at("ss_num_train_images"), "9");
  EXPECT_EQ(lora.metadata().at("ss_validation_split"), "0.25");
  EXPECT_EQ(lora.metadata().at("ss_validate_every_n_steps"), "4");

  // The same run on the nine training images by hand, without validation: the same losses, step by
  // step, and the same LoRA (same code, same machine: bit for bit).
  std::set<std::string> train;
  const std::set<std::string> held = heldOutStems(path("all"), 0.25, 7);
  ASSERT_EQ(held.size(), 3u);
  for (const auto& entry : fs::directory_iterator(path("all/1_demo shapes")))
    if (!held.count(entry.path().stem().string())) train.insert(entry.path().stem().string());
  copyDataset(path("kept"), train);
  ProcessResult plain = runRunner({"--config_file", writeConfig("plain.toml", path("out_plain"), path("kept"), "max_train_steps = 10\n"),
                                   "--events", "jsonl"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_TRUE(eventsOfType<sinter::events::Validation>(plain).empty());
  ASSERT_EQ(losses(plain).size(), 10u);
  EXPECT_EQ(losses(plain), losses(r));
  sinter::io::SafetensorsFile a(path("out_val/t.safetensors")), b(path("out_plain/t.safetensors"));
  ASSERT_EQ(a.keys(), b.keys());
  for (const auto& k : a.keys()) EXPECT_TRUE(torch::equal(a.tensor(k), b.tensor(k))) << k;
}

TEST_F(ValidationRun, EveryNEpochsMaxStepsAndItsOwnSeed) {
  // Epochs 1 and 2 end at steps 9 and 18; only the second is validated, on one batch. A validation
  // seed of its own holds out its own images, so training differs from the run's-seed split only
  // by which images train (the counts are the same).
  const std::string cfg = writeConfig("epochs.toml", path("out_epochs"), path("all"),
                                      "max_train_steps = 18\nvalidation_split = 0.25\nvalidate_every_n_epochs = 2\n"
                                      "max_validation_steps = 1\nvalidation_seed = 99\ncache_latents = true\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto v = eventsOfType<sinter::events::Validation>(r);
  ASSERT_EQ(v.size(), 1u) << r.err;
  EXPECT_EQ(v[0].step, 18);
  EXPECT_EQ(v[0].epoch, 2);
  EXPECT_EQ(v[0].kind, "epoch");
  EXPECT_NE(r.err.find("validation: 1 batches x 4 timesteps per pass"), std::string::npos) << r.err;
  EXPECT_EQ(losses(r).size(), 18u);
}

TEST_F(ValidationRun, BadValuesAreRefusedBeforeLoading) {
  for (const std::string& bad : {std::string("validation_split = 1.0\n"), std::string("validation_split = -0.5\n"),
                                 std::string("validation_split = 0.2\nmax_validation_steps = 0\n")}) {
    const std::string cfg = writeConfig("bad.toml", path("out_bad"), path("all"), "max_train_steps = 2\n" + bad);
    ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
    EXPECT_EQ(r.exitCode, 2) << bad << r.err;
    const std::string key = bad.find("max_validation_steps") != std::string::npos ? "max_validation_steps" : "validation_split";
    EXPECT_NE(r.err.find(key), std::string::npos) << bad << r.err;
  }
}

TEST_F(ValidationRun, FluxValidatesAtFixedSigmasAndLeavesTrainingAlone) {
  const std::string cfg = writeConfig("flux_val.toml", path("out_flux_val"), path("all"),
                                      "max_train_steps = 6\nvalidation_split = 0.25\nvalidate_every_n_steps = 3\n"
                                      "max_validation_steps = 2\n", "flux");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto v = eventsOfType<sinter::events::Validation>(r);
  ASSERT_EQ(v.size(), 3u) << r.err;  // steps 3 and 6, and the end of training (step 6, in epoch 1)
  EXPECT_EQ(v[0].step, 3);
  EXPECT_EQ(v[1].step, 6);
  EXPECT_EQ(v[1].kind, "step");
  EXPECT_EQ(v[2].step, 6);
  EXPECT_EQ(v[2].kind, "epoch");
  EXPECT_EQ(v[1].loss, v[2].loss);  // the same weights, images and noise
  EXPECT_NE(v[0].loss, v[1].loss);
  EXPECT_NE(r.err.find("validation: 2 batches x 4 timesteps per pass"), std::string::npos) << r.err;

  std::set<std::string> train;
  const std::set<std::string> held = heldOutStems(path("all"), 0.25, 7);
  for (const auto& entry : fs::directory_iterator(path("all/1_demo shapes")))
    if (!held.count(entry.path().stem().string())) train.insert(entry.path().stem().string());
  copyDataset(path("flux_kept"), train);
  ProcessResult plain = runRunner(
      {"--config_file", writeConfig("flux_plain.toml", path("out_flux_plain"), path("flux_kept"), "max_train_steps = 6\n", "flux"),
       "--events", "jsonl"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  ASSERT_EQ(losses(plain).size(), 6u);
  EXPECT_EQ(losses(plain), losses(r));
}

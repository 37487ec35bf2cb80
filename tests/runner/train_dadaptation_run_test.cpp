// Prodigy and the D-Adaptation optimizers training the tiny SDXL LoRA through the real
// sinter-runner on the CPU, with learning_rate 1.0 as they expect: the loss stays finite and falls,
// and the saved LoRA names the optimizer as sd-scripts does.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "io/safetensors.h"
#include "runner_process.h"

namespace fs = std::filesystem;
using sinter::test::doneStatus;
using sinter::test::losses;
using sinter::test::ProcessResult;
using sinter::test::runRunner;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

std::string writeConfig(const std::string& name, const std::string& extra) {
  const std::string text = "model_family = \"sdxl\"\n"
                           "pretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n"
                           "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
                           "train_data_dir = \"" + path("images") + "\"\n"
                           "output_dir = \"" + path("out_" + name) + "\"\n"
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
                           "learning_rate = 1.0\n"
                           "train_batch_size = 2\n"
                           "cache_latents = true\n"
                           "network_train_unet_only = true\n"
                           "seed = 7\n" + extra;
  const std::string p = path(name + ".toml");
  fs::create_directories(g_root);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

class DAdaptationRun : public ::testing::TestWithParam<std::pair<std::string, std::string>> {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_dadapt_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST_P(DAdaptationRun, LossStaysFiniteAndFalls) {
  const auto& [type, className] = GetParam();
  constexpr int kSteps = 40;
  const std::string cfg = writeConfig(type, "optimizer_type = \"" + type + "\"\nmax_train_steps = " + std::to_string(kSteps) + "\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  const std::vector<double> l = losses(r);
  ASSERT_EQ(l.size(), static_cast<size_t>(kSteps));
  double first = 0, last = 0;
  for (int i = 0; i < 10; ++i) first += l[i], last += l[l.size() - 1 - i];
  for (double x : l) ASSERT_TRUE(std::isfinite(x)) << type;
  EXPECT_LT(last, first * 0.95) << type << ": loss did not go down: first 10 steps " << first / 10 << ", last 10 " << last / 10;
  sinter::io::SafetensorsFile lora(path("out_" + type + "/t.safetensors"));
  EXPECT_EQ(lora.metadata().at("ss_optimizer"), className);
}

INSTANTIATE_TEST_SUITE_P(
    EachOptimizer, DAdaptationRun,
    ::testing::Values(std::make_pair(std::string("Prodigy"), std::string("prodigyopt.prodigy.Prodigy")),
                      std::make_pair(std::string("DAdaptation"), std::string("dadaptation.experimental.dadapt_adam_preprint.DAdaptAdamPreprint")),
                      std::make_pair(std::string("DAdaptAdam"), std::string("dadaptation.dadapt_adam.DAdaptAdam")),
                      std::make_pair(std::string("DAdaptLion"), std::string("dadaptation.dadapt_lion.DAdaptLion"))),
    [](const ::testing::TestParamInfo<std::pair<std::string, std::string>>& info) { return info.param.first; });

// Prodigy and the D-Adaptation optimizers training the tiny SDXL LoRA through the real
// sinter-runner on the CPU, with learning_rate 1.0 as they expect: the loss stays finite and falls,
// below what the same batches give untrained, and the saved LoRA names the optimizer as sd-scripts does.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

std::string writeConfig(const std::string& name, const std::string& extra, const std::string& learningRate = "1.0") {
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
                           "learning_rate = " + learningRate + "\n"
                           "train_batch_size = 2\n"
                           "cache_latents = true\n"
                           "network_train_unet_only = true\n"
                           "seed = 7\n" + extra;
  const std::string p = path(name + ".toml");
  fs::create_directories(g_root);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

constexpr int kSteps = 50;

double mean(const std::vector<double>& l, size_t from, size_t count) {
  double sum = 0;
  for (size_t i = from; i < from + count; ++i) sum += l[i];
  return sum / count;
}

// The losses of the same batches, noise and timesteps with weights that do not move (AdamW at
// lr 1e-12): what the loss would be without training.
std::vector<double> g_untrained;

struct Case {
  std::string type, args, ssOptimizer;
};

class DAdaptationRun : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_dadapt_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
    const std::string cfg = writeConfig("untrained", "max_train_steps = " + std::to_string(kSteps) + "\n", "1e-12");
    ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    g_untrained = losses(r);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST_P(DAdaptationRun, LossStaysFiniteAndFalls) {
  const Case& c = GetParam();
  ASSERT_EQ(g_untrained.size(), static_cast<size_t>(kSteps));
  const std::string cfg = writeConfig(c.type, "optimizer_type = \"" + c.type + "\"\noptimizer_args = [" + c.args + "]\nmax_train_steps = " +
                                                  std::to_string(kSteps) + "\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  const std::vector<double> l = losses(r);
  ASSERT_EQ(l.size(), static_cast<size_t>(kSteps));
  for (double x : l) ASSERT_TRUE(std::isfinite(x)) << c.type;
  const double first = mean(l, 0, 10), last = mean(l, kSteps - 10, 10), untrained = mean(g_untrained, kSteps - 10, 10);
  EXPECT_LT(last, first * 0.97) << c.type << ": loss did not go down: first 10 steps " << first << ", last 10 " << last
                                << " (untrained " << untrained << ")";
  EXPECT_LT(last, untrained * 0.97) << c.type << ": last 10 steps " << last << ", the same batches untrained " << untrained;
  sinter::io::SafetensorsFile lora(path("out_" + c.type + "/t.safetensors"));
  EXPECT_EQ(lora.metadata().at("ss_optimizer"), c.ssOptimizer);
}

// DAdaptLion's d grows slowly from its default d0 = 1e-6: d0 = 1e-3 lets 40 steps show.
INSTANTIATE_TEST_SUITE_P(EachOptimizer, DAdaptationRun,
                         ::testing::Values(Case{"Prodigy", "", "prodigyopt.prodigy.Prodigy"},
                                           Case{"DAdaptation", "", "dadaptation.experimental.dadapt_adam_preprint.DAdaptAdamPreprint"},
                                           Case{"DAdaptAdam", "\"decouple=True\"", "dadaptation.dadapt_adam.DAdaptAdam(decouple=True)"},
                                           Case{"DAdaptLion", "\"d0=1e-3\"", "dadaptation.dadapt_lion.DAdaptLion(d0=0.001)"}),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.type; });

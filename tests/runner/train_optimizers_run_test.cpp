// Each optimizer_type of bitsandbytes' family, Lion and SGDNesterov trains the tiny SDXL demo
// through the real sinter-runner on the CPU: the loss stays finite and falls, and the LoRA's
// ss_optimizer names the class as sd-scripts writes it. 8-bit kinds run with min_8bit_size low
// enough that the tiny LoRA's larger weights keep 8-bit states.
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

struct OptimizerRun {
  std::string type;
  std::string learningRate;  // each optimizer's usual range: Lion's sign steps want a smaller one
  std::string args;          // optimizer_args, a TOML array's contents
  std::string ssOptimizer;   // the class ss_optimizer starts with
  // LoRA's alpha: plain SGD's step scales with the gradient, which alpha / rank scales (1 for 4).
  std::string networkAlpha = "4.0";
};

std::ostream& operator<<(std::ostream& os, const OptimizerRun& r) { return os << r.type; }

class OptimizerRunTest : public ::testing::TestWithParam<OptimizerRun> {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_optimizers_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST_P(OptimizerRunTest, TheTinyDemosLossFalls) {
  const OptimizerRun& run = GetParam();
  const std::string out = path("out_" + run.type);
  const std::string config = path(run.type + ".toml");
  std::ofstream(config) << "model_family = \"sdxl\"\n"
                           "pretrained_model_name_or_path = \"" << path("tiny_sdxl.safetensors") << "\"\n"
                           "clip_tokenizer = \"" << path("tokenizer") << "\"\n"
                           "train_data_dir = \"" << path("images") << "\"\n"
                           "output_dir = \"" << out << "\"\n"
                           "output_name = \"t\"\n"
                           "resolution = \"64,64\"\n"
                           "enable_bucket = true\nmin_bucket_reso = 64\nmax_bucket_reso = 128\nbucket_reso_steps = 32\n"
                           "caption_extension = \".txt\"\nmax_data_loader_n_workers = 0\n"
                           "network_dim = 4\nseed = 7\n"
                           "network_alpha = " << run.networkAlpha << "\n"
                           "max_train_steps = 40\ntrain_batch_size = 2\ncache_latents = true\nnetwork_train_unet_only = true\n"
                           "optimizer_type = \"" << run.type << "\"\n"
                           "optimizer_args = [" << run.args << "]\n"
                           "learning_rate = " << run.learningRate << "\n";
  ProcessResult r = runRunner({"--config_file", config, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  const std::vector<double> l = losses(r);
  ASSERT_EQ(l.size(), 40u);
  double first = 0, last = 0;
  for (double v : l) ASSERT_TRUE(std::isfinite(v));
  for (int i = 0; i < 10; ++i) first += l[i], last += l[l.size() - 1 - i];
  EXPECT_LT(last, first * 0.95) << "loss did not go down: first 10 steps " << first / 10 << ", last 10 " << last / 10;
  sinter::io::SafetensorsFile lora(out + "/t.safetensors");
  EXPECT_EQ(lora.metadata().at("ss_optimizer").rfind(run.ssOptimizer, 0), 0u) << lora.metadata().at("ss_optimizer");
}

INSTANTIATE_TEST_SUITE_P(
    EachOptimizerType, OptimizerRunTest,
    ::testing::Values(
        OptimizerRun{"AdamW8bit", "0.01", "\"min_8bit_size=64\"", "bitsandbytes.optim.adamw.AdamW8bit(min_8bit_size=64)"},
        OptimizerRun{"PagedAdamW8bit", "0.01", "\"min_8bit_size=64\"", "bitsandbytes.optim.adamw.PagedAdamW8bit"},
        OptimizerRun{"PagedAdamW32bit", "0.01", "", "bitsandbytes.optim.adamw.PagedAdamW32bit"},
        OptimizerRun{"Lion", "0.005", "", "lion_pytorch.lion_pytorch.Lion"},
        OptimizerRun{"Lion8bit", "0.005", "\"min_8bit_size=64\"", "bitsandbytes.optim.lion.Lion8bit"},
        OptimizerRun{"SGDNesterov", "1.0", "", "torch.optim.sgd.SGD(momentum=0.9)", "16.0"},
        OptimizerRun{"SGDNesterov8bit", "1.0", "\"min_8bit_size=64\"", "bitsandbytes.optim.sgd.SGD8bit(min_8bit_size=64,momentum=0.9)",
                     "16.0"}),
    [](const ::testing::TestParamInfo<OptimizerRun>& info) { return info.param.type; });

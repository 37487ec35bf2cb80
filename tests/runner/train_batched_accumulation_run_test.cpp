// Batched gradient accumulation (docs/DESIGN.md §6, issue 56) through the real sinter-runner on the
// tiny SD 1.5, SDXL, FLUX.1 and SD 3.5 files, on the CPU: a run whose steps join their
// gradient_accumulation_steps micro-batches into one pass trains as the same run with them one
// after another (SINTER_BATCHED_ACCUMULATION=0), step losses and saved LoRA equal up to the order
// of floating-point sums, with the options whose draws are per batch (noise offset's random
// strength, multires noise, input perturbation) on; steps whose micro-batches differ in shape run
// them one after another and still match.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "runner_process.h"
#include "safetensors_compare.h"
#include "tiny_run_inputs.h"

namespace fs = std::filesystem;
using sinter::test::doneStatus;
using sinter::test::losses;
using sinter::test::ProcessResult;
using sinter::test::relativeDifference;
using sinter::test::runRunner;
using sinter::test::writeText;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// A LoRA config for a tiny family's files; `extra` lines are appended (keys must not repeat).
std::string writeConfig(const std::string& name, const std::string& family, const std::string& outputDir, const std::string& extra,
                        bool cacheLatents = true) {
  std::string text = "model_family = \"" + family + "\"\n"
                     "pretrained_model_name_or_path = \"" + path(family == "sd3" ? "sd3/tiny_sd3.safetensors" : "tiny_" + family + ".safetensors") + "\"\n"
                     "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
                     "train_data_dir = \"" + path("images") + "\"\n"
                     "output_dir = \"" + outputDir + "\"\n"
                     "output_name = \"t\"\n"
                     "caption_extension = \".txt\"\n"
                     "max_data_loader_n_workers = 0\n"
                     "network_dim = 4\n"
                     "network_alpha = 4.0\n"
                     "learning_rate = 0.01\n"
                     "cache_latents = " + std::string(cacheLatents ? "true" : "false") + "\n"
                     "gradient_accumulation_steps = 2\n"
                     "seed = 7\n" + extra;
  if (family == "flux")
    text += "ae = \"" + path("ae.safetensors") + "\"\nclip_l = \"" + path("clip_l.safetensors") + "\"\nt5xxl = \"" +
            path("t5xxl_fp16.safetensors") + "\"\nt5_tokenizer = \"" + path("tokenizer") + "\"\nt5xxl_max_token_length = 16\n";
  if (family == "sd3")
    text += "t5xxl = \"" + path("sd3/t5xxl_fp16.safetensors") + "\"\nt5_tokenizer = \"" + path("tokenizer") + "\"\nt5xxl_max_token_length = 16\n";
  const std::string p = path(name);
  writeText(p, text);
  return p;
}

// The run of `config` with its micro-batches joined where they may, and with them one after another.
struct Pair {
  ProcessResult joined, oneByOne;
};
Pair runBothWays(const std::string& name, const std::string& family, const std::string& extra,
                 const std::vector<std::string>& args = {}) {
  auto run = [&](const std::string& which) {
    std::vector<std::string> all{"--config_file", writeConfig(name + "_" + which + ".toml", family, path("out_" + name + "_" + which), extra),
                                 "--events", "jsonl"};
    all.insert(all.end(), args.begin(), args.end());
    return runRunner(all);
  };
  Pair p;
  p.joined = run("joined");
  ::setenv("SINTER_BATCHED_ACCUMULATION", "0", 1);
  p.oneByOne = run("one");
  ::unsetenv("SINTER_BATCHED_ACCUMULATION");
  return p;
}

// Step losses and saved LoRA of the two runs equal up to the order of sums (float32). The LoRA's
// bound is wider: AdamW divides each gradient by its own magnitude, so an element whose gradient is
// nearly zero moves by what rounding decides (the sequential run on 2 OpenMP threads against 1
// differs by 1.6e-5 on the LyCORIS case); joining with the wrong draws differs by more than 5e-2.
void expectSameTraining(const std::string& name, const Pair& p, size_t steps) {
  ASSERT_EQ(p.joined.exitCode, 0) << p.joined.err;
  ASSERT_EQ(p.oneByOne.exitCode, 0) << p.oneByOne.err;
  EXPECT_EQ(doneStatus(p.joined), "completed");
  const std::vector<double> a = losses(p.joined), b = losses(p.oneByOne);
  ASSERT_EQ(a.size(), steps);
  ASSERT_EQ(b.size(), steps);
  for (size_t i = 0; i < steps; ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * std::abs(b[i])) << name << ": the loss of step " << i + 1;
  EXPECT_LT(relativeDifference(path("out_" + name + "_joined/t.safetensors"), path("out_" + name + "_one/t.safetensors")), 1e-4)
      << name;
  EXPECT_NE(p.oneByOne.err.find("run one after another (SINTER_BATCHED_ACCUMULATION=0)"), std::string::npos) << p.oneByOne.err;
}

class BatchedAccumulationRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_batched_accumulation_" + std::to_string(::getpid()));
    sinter::test::writeTinyRunInputs(g_root, {"sd15", "sdxl", "flux"});
    // SD 3.5's T5-XXL file has the name FLUX.1's has: a folder of its own.
    sinter::test::writeTinyRunInputs(g_root / "sd3", {"sd3"}, /*dataset=*/false);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

// One bucket: every step joins. The per-batch draws (noise_offset's random strength, multires
// noise's levels and its std, ip_noise_gamma's random strength) stay per micro-batch.
TEST_F(BatchedAccumulationRun, Sd15JoinedStepsTrainAsMicroBatchesOneAfterAnother) {
  const Pair p = runBothWays("sd15", "sd15",
                             "resolution = \"64,64\"\nmax_train_steps = 3\nnoise_offset = 0.05\nnoise_offset_random_strength = true\n"
                             "multires_noise_iterations = 3\nip_noise_gamma = 0.05\nip_noise_gamma_random_strength = true\n"
                             "min_snr_gamma = 5.0\n");
  expectSameTraining("sd15", p, 3);
  EXPECT_NE(p.joined.err.find("gradient accumulation: 2 micro-batches of 1 run as one pass of 2 where their buckets match"),
            std::string::npos)
      << p.joined.err;
  EXPECT_NE(p.joined.err.find("gradient accumulation: 3 of 3 steps ran their micro-batches as one pass"), std::string::npos)
      << p.joined.err;
}

// Several buckets, batches of 2 (a bucket's last batch may hold 1): steps whose micro-batches differ
// run them one after another, the others join, and the run still trains as the sequential one.
// The text encoders train too (their LoRA inside the joined pass).
TEST_F(BatchedAccumulationRun, SdxlStepsOfDifferentBucketsRunTheirMicroBatchesOneAfterAnother) {
  const Pair p = runBothWays("sdxl", "sdxl",
                             "resolution = \"128,128\"\nenable_bucket = true\nmin_bucket_reso = 64\nmax_bucket_reso = 256\n"
                             "bucket_reso_steps = 32\ntrain_batch_size = 2\nmax_train_steps = 4\nloss_type = \"huber\"\n"
                             "noise_offset = 0.05\nnoise_offset_random_strength = true\n");
  expectSameTraining("sdxl", p, 4);
  EXPECT_NE(p.joined.err.find("gradient accumulation: steps whose micro-batches differ run them one after another"), std::string::npos)
      << p.joined.err;
  // Some steps joined and some did not.
  EXPECT_EQ(p.joined.err.find("gradient accumulation: 0 of 4 steps"), std::string::npos) << p.joined.err;
  EXPECT_EQ(p.joined.err.find("gradient accumulation: 4 of 4 steps"), std::string::npos) << p.joined.err;
}

TEST_F(BatchedAccumulationRun, FluxJoinedStepsTrainAsMicroBatchesOneAfterAnother) {
  const Pair p = runBothWays("flux", "flux",
                             "resolution = \"64,64\"\nmax_train_steps = 2\nip_noise_gamma = 0.05\nip_noise_gamma_random_strength = true\n"
                             "timestep_sampling = \"sigmoid\"\n");
  expectSameTraining("flux", p, 2);
  EXPECT_NE(p.joined.err.find("gradient accumulation: 2 of 2 steps ran their micro-batches as one pass"), std::string::npos)
      << p.joined.err;
}

// LyCORIS's deltas derived once per step (LoHa with DoRA): the joined pass is the step's one
// micro-batch, and the deltas' gradients reach the factors as from two.
TEST_F(BatchedAccumulationRun, LycorisDeltasBuiltOncePerStepTrainTheSame) {
  const Pair p = runBothWays("lycoris", "sd15",
                             "resolution = \"64,64\"\nmax_train_steps = 2\nnetwork_module = \"lycoris.kohya\"\n"
                             "network_args = [\"algo=loha\", \"dora_wd=True\"]\n");
  expectSameTraining("lycoris", p, 2);
  EXPECT_NE(p.joined.err.find("deltas built once per step"), std::string::npos) << p.joined.err;
  EXPECT_NE(p.joined.err.find("gradient accumulation: 2 of 2 steps ran their micro-batches as one pass"), std::string::npos)
      << p.joined.err;
}

// Two ranks (data parallel): each joins its own micro-batches; one all-reduce per step either way.
TEST_F(BatchedAccumulationRun, TwoRanksJoinTheirOwnMicroBatches) {
  const Pair p = runBothWays("ranks", "sd15", "resolution = \"64,64\"\nmax_train_steps = 2\n", {"--nproc_per_node", "2"});
  expectSameTraining("ranks", p, 2);
  EXPECT_NE(p.joined.err.find("gradient accumulation: 2 of 2 steps ran their micro-batches as one pass"), std::string::npos)
      << p.joined.err;
}

// SD 3.x: the timesteps (logit-normal) and the noise drawn per micro-batch.
TEST_F(BatchedAccumulationRun, Sd3JoinedStepsTrainAsMicroBatchesOneAfterAnother) {
  const Pair p = runBothWays("sd3", "sd3", "resolution = \"64,64\"\nmax_train_steps = 2\nweighting_scheme = \"logit_normal\"\n");
  expectSameTraining("sd3", p, 2);
  EXPECT_NE(p.joined.err.find("gradient accumulation: 2 of 2 steps ran their micro-batches as one pass"), std::string::npos)
      << p.joined.err;
}

// Where a micro-batch draws before the step's noise (latents encoded in each step), the run says
// why it does not join and trains one micro-batch after another.
TEST_F(BatchedAccumulationRun, LatentsEncodedInTheStepKeepTheMicroBatchesApart) {
  const ProcessResult r = runRunner(
      {"--config_file", writeConfig("uncached.toml", "sd15", path("out_uncached"), "resolution = \"64,64\"\nmax_train_steps = 1\n", false)});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("run one after another (the latents are encoded in each step (cache_latents is off)"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("steps ran their micro-batches as one pass"), std::string::npos) << r.err;
}

// Golden outputs, recorded on the CPU before the runner was reshaped, reproduced bit for bit:
// the tiny UNet, VAE, CLIP-L and bigG on fixed inputs, and the bundled demo's first 20 losses.
// A change that alters any number here changes what users train, so it must be deliberate:
// SINTER_WRITE_GOLDEN=1 rewrites the files under tests/data/golden (then say why in the commit).
//
// Bitwise equality needs the same kernels: the threads, ATen's vector width and OpenBLAS's kernel
// are pinned for the test and the runner it starts (AVX2, which every x86-64 CI machine has).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/events.h"
#include "io/safetensors.h"
#include "models/random_checkpoint.h"
#include "runner_process.h"
#include "train/sdxl/sdxl_model_set.h"
#include "train/sdxl/sdxl_module_outputs.h"

namespace fs = std::filesystem;

namespace {

const fs::path kGoldenDir = fs::path(SINTER_TEST_DATA_DIR) / "golden";
const int kDemoSteps = 20;

bool writingGolden() {
  const char* v = std::getenv("SINTER_WRITE_GOLDEN");
  return v && std::string(v) == "1";
}

// OpenBLAS picks its kernel for the CPU when it loads, before any initialiser of this program
// runs, and ATen and OpenMP read their settings at first use: so the pins are set and, unless this
// process was started with them, it runs itself again with them (the same arguments), so that the
// in-process outputs do not depend on the CPU of the machine (an AMD and an Intel CPU differ in
// the last bits otherwise).
const bool kPinnedKernels = [] {
  if (const char* pinned = std::getenv("SINTER_PINNED_KERNELS"); pinned && std::string(pinned) == "1") return true;
  ::setenv("OMP_NUM_THREADS", "1", 1);
  ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
  ::setenv("ATEN_CPU_CAPABILITY", "avx2", 1);
  ::setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  ::setenv("SINTER_PINNED_KERNELS", "1", 1);
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(cmdline, arg, '\0');) args.push_back(arg);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv("/proc/self/exe", argv.data());
  std::perror("train_golden_outputs_test: running itself again with pinned kernels");
  std::_Exit(1);
}();

class GoldenOutputs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root = fs::temp_directory_path() / ("sinter_golden_" + std::to_string(::getpid()));
    fs::create_directories(root);
    torch::set_num_threads(1);
    // The demo's own inputs: `bash .ci/demo` makes them with these seeds.
    ASSERT_EQ(sinter::test::runRunner({"--init_checkpoint", (root / "tiny_sdxl.safetensors").string(), "--model_family", "sdxl",
                                        "--model_size", "tiny", "--seed", "1"})
                  .exitCode,
              0);
    ASSERT_EQ(sinter::test::runRunner({"--init_dataset", (root / "images").string(), "--seed", "1"}).exitCode, 0);
    ASSERT_EQ(sinter::test::runRunner({"--init_tokenizer", (root / "tokenizer").string()}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(root); }
  static fs::path root;
};
fs::path GoldenOutputs::root;

// The four models' inputs, drawn from a fixed seed.
std::map<std::string, torch::Tensor> fixedInputs(const sinter::models::SdxlUnetConfig& unet) {
  torch::manual_seed(1234);
  const int64_t batch = 2;
  std::map<std::string, torch::Tensor> in;
  in["x"] = torch::randn({batch, unet.inChannels, 16, 16});
  in["timesteps"] = torch::tensor({999, 10}, torch::kLong);
  in["context"] = torch::randn({batch, 77, unet.contextDim});
  in["y"] = torch::randn({batch, unet.admInChannels});
  in["images"] = torch::rand({batch, 3, 32, 32}) * 2 - 1;
  torch::Tensor ids = torch::randint(0, 49406, {batch, 77}, torch::kLong);
  ids.select(1, 0).fill_(49406);   // <|startoftext|>
  ids.select(1, 76).fill_(49407);  // <|endoftext|>
  in["input_ids"] = ids;
  return in;
}

sinter::train::SdxlModelSet cpuModels(const std::string& checkpoint) {
  sinter::train::SdxlModelSet models = sinter::train::loadSdxlModelSet(checkpoint, "");
  models.toDevice(torch::kCPU, torch::kFloat32);
  models.setTraining(false);
  return models;
}

// Every output of the four models on inputs drawn from a fixed seed.
std::map<std::string, torch::Tensor> modelOutputs(const std::string& checkpoint) {
  sinter::train::SdxlModelSet models = cpuModels(checkpoint);
  return sinter::train::sdxlModuleOutputs(models, fixedInputs(models.unet->config()));
}

// Losses as the step events carry them (JSON numbers printed to round-trip a double).
std::vector<double> demoLosses(const fs::path& root) {
  const sinter::test::ProcessResult r = sinter::test::runRunner(
      {"--config_file", std::string(SINTER_PRESETS_DIR) + "/demo_sdxl_lora_tiny.toml", "--pretrained_model_name_or_path",
       (root / "tiny_sdxl.safetensors").string(), "--clip_tokenizer", (root / "tokenizer").string(), "--train_data_dir",
       (root / "images").string(), "--output_dir", (root / "lora").string(), "--max_train_steps", std::to_string(kDemoSteps),
       "--sample_prompts", std::string(SINTER_PRESETS_DIR) + "/demo_sample_prompts.txt", "--events", "jsonl"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::vector<double> losses;
  for (const auto& line : r.lines())
    if (auto e = sinter::events::parseJsonLine(line))
      if (auto s = std::get_if<sinter::events::Step>(&*e)) losses.push_back(s->loss);
  return losses;
}

}  // namespace

TEST_F(GoldenOutputs, TinyModelsOnFixedInputs) {
  ASSERT_TRUE(kPinnedKernels);
  const std::map<std::string, torch::Tensor> outputs = modelOutputs((root / "tiny_sdxl.safetensors").string());
  const fs::path file = kGoldenDir / "tiny_sdxl_outputs.safetensors";
  if (writingGolden()) {
    fs::create_directories(kGoldenDir);
    sinter::io::writeSafetensors(file.string(), {outputs.begin(), outputs.end()},
                                 {{"note", "sinter golden outputs: tests/runner/train_golden_outputs_test.cpp"}});
    GTEST_SKIP() << "wrote " << file;
  }
  sinter::io::SafetensorsFile golden(file.string());
  ASSERT_EQ(golden.keys().size(), outputs.size());
  for (const auto& [name, tensor] : outputs) {
    const torch::Tensor expected = golden.tensor(name);
    ASSERT_EQ(expected.sizes(), tensor.sizes()) << name;
    EXPECT_TRUE(torch::equal(expected, tensor)) << name << ": max |difference| "
                                                << (expected - tensor).abs().max().item<double>();
  }
}

TEST_F(GoldenOutputs, DemoRunLossesStepByStep) {
  const std::vector<double> losses = demoLosses(root);
  ASSERT_EQ(losses.size(), static_cast<size_t>(kDemoSteps));
  const fs::path file = kGoldenDir / "demo_losses.txt";
  if (writingGolden()) {
    fs::create_directories(kGoldenDir);
    std::ofstream out(file);
    out << "# the demo preset's first " << kDemoSteps << " losses (tests/runner/train_golden_outputs_test.cpp)\n";
    for (double l : losses) out << std::setprecision(17) << l << "\n";
    GTEST_SKIP() << "wrote " << file;
  }
  std::ifstream in(file);
  ASSERT_TRUE(in) << file;
  std::vector<double> expected;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') expected.push_back(std::stod(line));
  ASSERT_EQ(expected.size(), losses.size());
  for (size_t i = 0; i < losses.size(); ++i) EXPECT_EQ(expected[i], losses[i]) << "step " << i + 1;
}

// The runner's --module_outputs tool writes what the models compute in-process (the
// GPU comparison with sd-scripts' modules reads it: tests/gpu/sdxl_modules_vs_sdscripts.py).
TEST_F(GoldenOutputs, ModuleOutputsToolWritesTheModelsOutputs) {
  const std::string checkpoint = (root / "tiny_sdxl.safetensors").string();
  const std::map<std::string, torch::Tensor> expected = modelOutputs(checkpoint);
  sinter::train::SdxlModelSet models = cpuModels(checkpoint);
  const std::map<std::string, torch::Tensor> inputs = fixedInputs(models.unet->config());
  const fs::path in = root / "module_inputs.safetensors", out = root / "module_outputs.safetensors";
  sinter::io::writeSafetensors(in.string(), {inputs.begin(), inputs.end()});
  const sinter::test::ProcessResult r = sinter::test::runRunner(
      {"--module_outputs", out.string(), "--module_inputs", in.string(), "--pretrained_model_name_or_path", checkpoint});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  sinter::io::SafetensorsFile written(out.string());
  ASSERT_EQ(written.keys().size(), expected.size());
  // Not bit for bit: the runner process and this one differ in the last bits (1e-6 relative);
  // writing another output, or the outputs of other inputs, differs by far more than the bound.
  for (const auto& [name, tensor] : expected) {
    const torch::Tensor got = written.tensor(name);
    ASSERT_EQ(got.sizes(), tensor.sizes()) << name;
    EXPECT_LE(((got - tensor).norm() / tensor.norm()).item<double>(), 1e-4) << name;
  }
}

TEST_F(GoldenOutputs, ModuleOutputsToolNamesTheInputItCannotUse) {
  const std::string checkpoint = (root / "tiny_sdxl.safetensors").string();
  const fs::path in = root / "bad_inputs.safetensors", out = root / "bad_outputs.safetensors";
  sinter::io::writeSafetensors(in.string(), {{"input_ids", torch::zeros({2, 77})}});
  sinter::test::ProcessResult r = sinter::test::runRunner(
      {"--module_outputs", out.string(), "--module_inputs", in.string(), "--pretrained_model_name_or_path", checkpoint});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("input_ids"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  r = sinter::test::runRunner({"--module_outputs", out.string(), "--pretrained_model_name_or_path", checkpoint});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--module_inputs"), std::string::npos) << r.err;
}

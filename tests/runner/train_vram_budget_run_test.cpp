// vram_budget_gb in the runner (train/base/vram_budget.h) on tiny random FLUX.1-dev files: the
// memory model's parameter counts read from the checkpoint's header are the module's own, the
// chosen plan's settings reach the run (the dry run's resolved config and its compile plan), the
// user's settings are kept, a budget nothing fits is refused naming the smallest reachable one,
// the allocator cap refuses the CPU, and an SDXL textual inversion run is planned with its rows. No
// timings are asserted.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "core/toml_config.h"
#include "core/vram_plan.h"
#include "models/layers/conv2d.h"
#include "models/flux/flux_transformer.h"
#include "models/layers/linear.h"
#include "models/unet/sdxl_unet.h"
#include "models/unet/sdxl_unet_layout.h"
#include "models/weights/served_weight.h"
#include "runner_process.h"
#include "train/base/vram_budget.h"
#include "train/loop/vram_budget_plan.h"
#include "train/sdxl/sdxl_model_set.h"

namespace fs = std::filesystem;
using sinter::test::runRunner;
using sinter::test::writeText;
using namespace sinter;

namespace {

fs::path g_root;
std::string path(const std::string& rel) { return (g_root / rel).string(); }

std::string configText(const std::string& extra) {
  return "model_family = \"flux\"\n"
         "pretrained_model_name_or_path = \"" + path("flux/flux1-dev.safetensors") + "\"\n"
         "ae = \"" + path("flux/ae.safetensors") + "\"\n"
         "clip_l = \"" + path("flux/clip_l.safetensors") + "\"\n"
         "t5xxl = \"" + path("flux/t5xxl_fp16.safetensors") + "\"\n"
         "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
         "t5_tokenizer = \"" + path("tokenizer") + "\"\n"
         "train_data_dir = \"" + path("images") + "\"\n"
         "output_dir = \"" + path("out") + "\"\n"
         "resolution = \"1024,1024\"\n"
         "caption_extension = \".txt\"\n"
         "network_dim = 32\n"
         "mixed_precision = \"bf16\"\n"
         "cache_text_encoder_outputs = true\n"
         "network_train_unet_only = true\n" +
         // Cached latents unless `extra` says otherwise.
         (extra.find("cache_latents =") == std::string::npos ? "cache_latents = true\n" : "") + extra;
}

Config configWith(const std::string& extra) { return parseConfigToml(configText(extra), "t.toml").config; }

// SDXL LoRA on the tiny checkpoint at 1024x1024, as the 6 GiB budget trains it (vram_budget.sh).
std::string sdxlConfigText(const std::string& extra) {
  return "model_family = \"sdxl\"\n"
         "pretrained_model_name_or_path = \"" + path("sdxl.safetensors") + "\"\n"
         "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
         "train_data_dir = \"" + path("images") + "\"\n"
         "output_dir = \"" + path("out_sdxl") + "\"\n"
         "resolution = \"1024,1024\"\n"
         "caption_extension = \".txt\"\n"
         "network_dim = 8\n"
         "mixed_precision = \"bf16\"\n"
         "cache_latents = true\n"
         "cache_text_encoder_outputs = true\n"
         "network_train_unet_only = true\n" + extra;
}

// SDXL textual inversion on the tiny checkpoint: three vectors for "zz", the object templates.
std::string sdxlTextualInversionConfigText(const std::string& extra) {
  return "model_family = \"sdxl\"\n"
         "training_type = \"textual_inversion\"\n"
         "pretrained_model_name_or_path = \"" + path("sdxl.safetensors") + "\"\n"
         "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
         "train_data_dir = \"" + path("images") + "\"\n"
         "output_dir = \"" + path("out_ti") + "\"\n"
         "resolution = \"1024,1024\"\n"
         "caption_extension = \".txt\"\n"
         "max_data_loader_n_workers = 0\n"
         "mixed_precision = \"bf16\"\n"
         "cache_latents = true\n"
         "token_string = \"zz\"\n"
         "num_vectors_per_token = 3\n"
         "use_object_template = true\n" + extra;
}

std::string dryRun(const std::string& name, const std::string& extra, int expectedExit, std::string* err = nullptr) {
  writeText(path(name), configText(extra));
  const auto r = runRunner({"--config_file", path(name), "--dry_run"});
  EXPECT_EQ(r.exitCode, expectedExit) << r.err;
  if (err) *err = r.err;
  return r.out;
}

class VramBudgetRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_vram_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ::setenv("SINTER_CACHE_DIR", path("cache").c_str(), 1);  // no correction from this machine's runs
    ASSERT_EQ(runRunner({"--init_checkpoint", path("flux/flux1-dev.safetensors"), "--model_family", "flux", "--model_size", "tiny",
                         "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

int64_t numel(torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

}  // namespace

TEST_F(VramBudgetRun, CountsFromTheHeaderAreTheModules) {
  const MemoryModel m = train::memoryModelForRun(configWith(""), Family::FLUX);
  models::FluxTransformer t(models::FluxConfig::tiny());
  ASSERT_EQ(m.blocks.size(), 2u);
  EXPECT_EQ(m.blocks[0].count, static_cast<int64_t>(t->config().depth));
  EXPECT_EQ(m.blocks[1].count, static_cast<int64_t>(t->config().depthSingleBlocks));
  int64_t total = m.trunkLinearParams + m.trunkOtherParams;
  for (const BlockKind& b : m.blocks) total += b.count * (b.linearParams + b.otherParams);
  EXPECT_EQ(total, numel(*t));
  // sd-scripts' blocks_to_swap limit for 2 double and 2 single blocks: none can be swapped.
  EXPECT_EQ(m.maxBlocksToSwap, 0);
  EXPECT_GT(m.encoderParams, 0);
  EXPECT_GT(m.autoencoderParams, 0);
  // The AE's encoding works as wide as its conv_in's output: the tiny AE's is narrower than 128.
  EXPECT_GT(m.autoencoderEncodeScale, 0.0);
  EXPECT_LT(m.autoencoderEncodeScale, 1.0);
}

TEST_F(VramBudgetRun, ThePlanReachesTheResolvedConfigAndTheCompilePlan) {
  // A budget between the checkpointed plan's estimate and the resident one: checkpointing is chosen.
  // Latents are encoded in the steps here: the tiny model's start would be its AE encoding at
  // 1024x1024, larger than either step.
  const std::string uncached = "cache_latents = false\n";
  const Config base = configWith(uncached + "vram_budget_gb = 100\n");
  const MemoryModel m = train::memoryModelForRun(base, Family::FLUX);
  const PlanRequest request = planRequestFromConfig(base, m);
  const double resident = estimatePlan(m, request, PlanSettings{}).stepPeakBytes;
  PlanSettings ckpt;
  ckpt.gradientCheckpointing = true;
  const double checkpointed = estimatePlan(m, request, ckpt).stepPeakBytes;
  ASSERT_LT(checkpointed, resident);
  const double budget = (checkpointed + resident) / 2 / kGiB;
  ASSERT_LT(estimatePlan(m, request, ckpt).startPeakBytes, budget * kGiB);
  const std::string out = dryRun("between.toml", uncached + "vram_budget_gb = " + std::to_string(budget) + "\n", 0);
  EXPECT_NE(out.find("# memory plan"), std::string::npos) << out;
  EXPECT_NE(out.find("gradient_checkpointing = true"), std::string::npos) << out;
  EXPECT_NE(out.find("plan: fp8_base off, blocks_to_swap 0, gradient_checkpointing on"), std::string::npos) << out;
  EXPECT_NE(out.find("note: vram_budget_gb plan:"), std::string::npos) << out;
  // With room, nothing is given up.
  const std::string roomy = dryRun("roomy.toml", "vram_budget_gb = 100\n", 0);
  EXPECT_NE(roomy.find("gradient_checkpointing = false"), std::string::npos) << roomy;
  // A setting the user made is kept, and the plan says so.
  const std::string kept = dryRun("kept.toml", "vram_budget_gb = 100\ngradient_checkpointing = true\n", 0);
  EXPECT_NE(kept.find("gradient_checkpointing = true"), std::string::npos) << kept;
  EXPECT_NE(kept.find("gradient_checkpointing is set in the config: kept as set"), std::string::npos) << kept;
}

TEST_F(VramBudgetRun, ABudgetNothingFitsIsRefusedNamingTheSmallest) {
  std::string err;
  dryRun("tiny_budget.toml", "vram_budget_gb = 0.001\n", 2, &err);
  EXPECT_NE(err.find("vram_budget_gb"), std::string::npos) << err;
  EXPECT_NE(err.find("the smallest reachable is"), std::string::npos) << err;
  // The run itself refuses it before loading anything.
  writeText(path("tiny_budget_run.toml"), configText("vram_budget_gb = 0.001\nmax_train_steps = 1\n"));
  const auto r = runRunner({"--config_file", path("tiny_budget_run.toml")});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_EQ(r.err.find("loading "), std::string::npos) << r.err;
}

TEST_F(VramBudgetRun, TheAllocatorCapNeedsCuda) {
  ::setenv("SINTER_CUDA_MEMORY_CAP_GB", "8", 1);
  EXPECT_THROW(train::applyMemoryCapFromEnvironment(torch::Device(torch::kCPU)), std::invalid_argument);
  ::setenv("SINTER_CUDA_MEMORY_CAP_GB", "eight", 1);
  try {
    train::applyMemoryCapFromEnvironment(torch::Device(torch::kCPU));
    ADD_FAILURE() << "a bad value was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'eight'"), std::string::npos) << e.what();
  }
  ::unsetenv("SINTER_CUDA_MEMORY_CAP_GB");
  EXPECT_EQ(train::applyMemoryCapFromEnvironment(torch::Device(torch::kCPU)), "");
}

// After step 1 (the loop calls these on CUDA): the check estimates the settings the resolved
// config holds, and a peak over the estimate is recorded for the next start's plan.
TEST_F(VramBudgetRun, ThePeakAfterStepOneIsRecordedWhenOverThePlan) {
  Config resolved = configWith("vram_budget_gb = 100\ngradient_checkpointing = true\n");
  const std::optional<train::VramBudgetCheck> check = train::vramBudgetCheck(resolved, Family::FLUX);
  ASSERT_TRUE(check);
  const MemoryModel m = train::memoryModelForRun(resolved, Family::FLUX);
  const PlanRequest request = planRequestFromConfig(resolved, m);
  EXPECT_EQ(check->plannedBytes, estimatePlan(m, request, request.userFixed).stepPeakBytes);
  EXPECT_EQ(check->budgetBytes, 100 * kGiB);
  EXPECT_EQ(check->recordKey, "flux lora 1024x1024 batch 1");
  EXPECT_FALSE(train::vramBudgetCheck(configWith(""), Family::FLUX));

  train::EventSink events(false);
  train::reportVramPeak(*check, check->plannedBytes * 0.5, events);  // under: nothing recorded
  EXPECT_FALSE(fs::exists(check->recordFile));
  train::reportVramPeak(*check, check->plannedBytes * 1.5, events);
  ASSERT_TRUE(fs::exists(check->recordFile));
  // The next start plans with the correction: its estimate of the same settings is 1.5 times higher.
  const std::optional<train::VramBudgetCheck> next = train::vramBudgetCheck(resolved, Family::FLUX);
  ASSERT_TRUE(next);
  EXPECT_NEAR(next->correction, 1.5, 1e-9);
  EXPECT_NEAR(next->plannedBytes, check->plannedBytes * 1.5, check->plannedBytes * 1e-9);
  const std::optional<VramPlan> plan = train::planForRun(resolved, Family::FLUX);
  ASSERT_TRUE(plan);
  EXPECT_NEAR(plan->request.correction, 1.5, 1e-9);
  fs::remove(check->recordFile);
}

// A short run with a budget trains on the CPU (the step-1 check is CUDA's) with the plan's settings,
// which its log states.
TEST_F(VramBudgetRun, ARunWithABudgetTrains) {
  writeText(path("run.toml"), configText("vram_budget_gb = 100\nmax_train_steps = 2\n"));
  const auto r = runRunner({"--config_file", path("run.toml"), "--resolution", "128,128", "--t5xxl_max_token_length", "16"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("vram budget 100.0 GiB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("plan: "), std::string::npos) << r.err;
}

// SDXL: the U-Net's weights fp8_base stores (its Linear weights and Conv2d kernels) are counted from
// the checkpoint's header apart from the rest, and equal the module's own; the full-size count is
// the layout's Linears plus the convolutions. fp8_base is planned where this libtorch has float8.
TEST_F(VramBudgetRun, SdxlCountsWhatFp8BaseStoresFromTheHeader) {
  const MemoryModel m = train::memoryModelForRun(parseConfigToml(sdxlConfigText(""), "s.toml").config, Family::SDXL);
  models::SdxlUnet unet(models::SdxlUnetConfig::tiny());
  int64_t stored = 0;
  for (const auto& module : unet->modules(false)) {
    if (auto l = std::dynamic_pointer_cast<models::LinearImpl>(module)) stored += l->weight.numel();
    if (auto c = std::dynamic_pointer_cast<models::Conv2dImpl>(module)) stored += c->weight.numel();
  }
  ASSERT_EQ(m.blocks.size(), 1u);
  EXPECT_EQ(m.blocks[0].linearParams, stored);
  EXPECT_EQ(m.blocks[0].linearParams + m.blocks[0].otherParams, numel(*unet));
  EXPECT_EQ(m.fp8Capable, models::float8InBuild());
  int64_t fullLinear = 0;
  for (const models::LinearInfo& l : models::sdxlUnetLinearLayers(models::SdxlUnetConfig::full())) fullLinear += l.in * l.out;
  EXPECT_EQ(fullLinear, 2232647680LL);  // core/vram_plan.cpp's SDXL base Linear weights
  // The text encoders' Linear weights (what fp8_base stores of them too) are the models' own, and
  // the VAE's working memory scales with its first level's width (the tiny VAE's 32 of 128).
  train::SdxlModelSet set = train::loadSdxlModelSet(path("sdxl.safetensors"), "");
  int64_t encoderLinear = 0;
  for (torch::nn::Module* te : std::initializer_list<torch::nn::Module*>{set.clipL.get(), set.bigG.get()})
    for (const auto& module : te->modules(false))
      if (auto l = std::dynamic_pointer_cast<models::LinearImpl>(module)) encoderLinear += l->weight.numel();
  EXPECT_GT(encoderLinear, 0);
  EXPECT_EQ(m.encoderFp8LinearParams, encoderLinear);
  EXPECT_DOUBLE_EQ(m.autoencoderEncodeScale, static_cast<double>(set.vae->config().channels) / 128.0);
  EXPECT_LT(m.autoencoderEncodeScale, 1.0);
}

// A budget only fp8_base reaches (between the best plan with it and the best without, from the
// header's counts): the plan stores the U-Net in float8, and the dry run's resolved config says so;
// a libtorch without float8 refuses the same budget naming the smallest it could reach. At 256x256:
// at 1024x1024 the tiny model's start is its VAE encoding (the staged start's largest stage, which
// fp8_base does not change), not its weights.
TEST_F(VramBudgetRun, SdxlLoraPlansFp8BaseWhereOnlyItFits) {
  const Config base = parseConfigToml(sdxlConfigText("vram_budget_gb = 100\n"), "s.toml").config;
  MemoryModel m = train::memoryModelForRun(base, Family::SDXL);
  m.fp8Capable = true;  // as a libtorch with float8 has it
  PlanRequest request = planRequestFromConfig(base, m);
  request.width = request.height = 256;
  double withFp8 = 1e30, without = 1e30;
  for (const PlanEstimate& c : planVram(m, request).candidates) {
    double& best = c.settings.fp8Base ? withFp8 : without;
    best = std::min(best, c.limitingBytes);
  }
  ASSERT_LT(withFp8, without);
  const double budget = (withFp8 + without) / 2 / kGiB;
  PlanRequest tight = request;
  tight.budgetBytes = budget * kGiB;
  const VramPlan plan = planVram(m, tight);
  ASSERT_TRUE(plan.chosen) << plan.error();
  EXPECT_TRUE(plan.chosen->settings.fp8Base);
  writeText(path("sdxl_fp8.toml"), sdxlConfigText("vram_budget_gb = " + std::to_string(budget) + "\n"));
  const auto r = runRunner({"--config_file", path("sdxl_fp8.toml"), "--resolution", "256,256", "--dry_run"});
  EXPECT_NE((r.out + r.err).find("at 256x256"), std::string::npos) << r.out << r.err;
  if (models::float8InBuild()) {
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("fp8_base = true"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("plan: fp8_base on"), std::string::npos) << r.out;
  } else {
    EXPECT_EQ(r.exitCode, 2) << r.out;
    EXPECT_NE(r.err.find("the smallest reachable is"), std::string::npos) << r.err;
  }
}

// Textual inversion (SDXL): the U-Net and both text encoders frozen as under LoRA (fp8_base applies),
// the trained parameters the new rows (num_vectors_per_token x the encoders' token widths, read from
// the header) with their gradients and AdamW state, the step's activations a LoRA run's (gradients
// flow through the U-Net to the conditioning). The dry run plans it, a run trains with its plan, and
// a measured peak is recorded under the method's own key.
TEST_F(VramBudgetRun, SdxlTextualInversionIsPlannedAsAFrozenBaseAndItsRows) {
  const Config config = parseConfigToml(sdxlTextualInversionConfigText("vram_budget_gb = 100\n"), "ti.toml").config;
  const MemoryModel m = train::memoryModelForRun(config, Family::SDXL);
  train::SdxlModelSet set = train::loadSdxlModelSet(path("sdxl.safetensors"), "");
  EXPECT_EQ(m.embeddingWidth,
            set.clipL->textModel()->tokenEmbedding()->weight.size(1) + set.bigG->textModel()->tokenEmbedding()->weight.size(1));
  EXPECT_EQ(sdxlBaseMemoryModel().embeddingWidth, 768 + 1280);
  const PlanRequest request = planRequestFromConfig(config, m);
  EXPECT_TRUE(request.textualInversion);
  EXPECT_FALSE(request.lora);
  EXPECT_EQ(request.embeddingVectors, 3);
  const PlanEstimate ti = estimatePlan(m, request, PlanSettings{});
  const double rows = 3.0 * static_cast<double>(m.embeddingWidth);
  EXPECT_DOUBLE_EQ(ti.trainableBytes, rows * 4);  // float32
  EXPECT_DOUBLE_EQ(ti.gradientBytes, rows * 4);
  EXPECT_DOUBLE_EQ(ti.optimizerBytes, rows * 8);  // AdamW's two moments
  // The same settings as a LoRA run training its encoders too: the same resident weights (the
  // encoders on the device, the latents cached) and activations; only what trains differs.
  Config asLora = config;
  asLora.set("training_type", std::string("lora"));
  const PlanEstimate lora = estimatePlan(m, planRequestFromConfig(asLora, m), PlanSettings{});
  EXPECT_DOUBLE_EQ(ti.residentWeightsBytes, lora.residentWeightsBytes);
  EXPECT_DOUBLE_EQ(ti.activationBytes, lora.activationBytes);
  EXPECT_LT(ti.stepPeakBytes, lora.stepPeakBytes);
  // The planner offers what a frozen base allows (fp8_base where this libtorch has float8), never
  // the full-weight runs' fused backward pass.
  const VramPlan plan = planVram(m, request);
  ASSERT_TRUE(plan.chosen) << plan.error();
  bool fp8 = false;
  for (const PlanEstimate& c : plan.candidates) {
    fp8 = fp8 || c.settings.fp8Base;
    EXPECT_FALSE(c.settings.fusedBackwardPass);
  }
  EXPECT_EQ(fp8, m.fp8Capable);
  EXPECT_EQ(plan.lines().front().rfind("vram budget 100.0 GiB: textual inversion at 1024x1024", 0), 0u) << plan.lines().front();
  const std::optional<train::VramBudgetCheck> check = train::vramBudgetCheck(config, Family::SDXL);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->recordKey, "sdxl textual_inversion 1024x1024 batch 1");

  writeText(path("ti.toml"), sdxlTextualInversionConfigText("vram_budget_gb = 100\nmax_train_steps = 1\n"));
  const auto dry = runRunner({"--config_file", path("ti.toml"), "--dry_run"});
  ASSERT_EQ(dry.exitCode, 0) << dry.err;
  EXPECT_NE(dry.out.find("# memory plan"), std::string::npos) << dry.out;
  const auto run = runRunner({"--config_file", path("ti.toml"), "--resolution", "64,64"});
  EXPECT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.err.find("vram budget 100.0 GiB: textual inversion at 64x64"), std::string::npos) << run.err;
}

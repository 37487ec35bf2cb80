// The memory plan (core/vram_plan.h) at the issue's budgets with the full-size architectures: pure
// arithmetic, no weights. The invariants are asserted, not the constants: a chosen plan's estimate
// is within the budget, nothing that fits is faster, a smaller budget never gets a faster plan,
// the user's values are kept, and a budget nothing fits names the smallest one that would.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "core/toml_config.h"
#include "core/validation.h"
#include "core/vram_budget_record.h"
#include "core/vram_plan.h"

using namespace sinter;

namespace {

Config parse(const std::string& text) { return parseConfigToml(text, "v.toml").config; }

// FLUX.1-dev LoRA as sd-scripts' low-memory recipes train it: cached text encoder outputs and
// latents, the transformer only, rank 32, AdamW, bf16, 1024x1024 batch 1.
const char* kFluxLora =
    "model_family = \"flux\"\nmixed_precision = \"bf16\"\nnetwork_dim = 32\nresolution = \"1024,1024\"\n"
    "cache_text_encoder_outputs = true\ncache_latents = true\nnetwork_train_unet_only = true\n";
const char* kSdxlLora =
    "model_family = \"sdxl\"\nmixed_precision = \"bf16\"\nnetwork_dim = 8\nresolution = \"1024,1024\"\n"
    "cache_text_encoder_outputs = true\ncache_latents = true\nnetwork_train_unet_only = true\n";
const char* kSdxlFineTune =
    "model_family = \"sdxl\"\ntraining_type = \"finetune\"\nmixed_precision = \"bf16\"\nfull_bf16 = true\n"
    "optimizer_type = \"Adafactor\"\nresolution = \"1024,1024\"\ncache_text_encoder_outputs = true\ncache_latents = true\n";

// `startMustFit` false: the step alone, as --benchmark_steps plans it.
VramPlan planFor(const std::string& toml, double gib, bool startMustFit = true) {
  Config c = parse(toml + "vram_budget_gb = " + std::to_string(gib) + "\n");
  EXPECT_FALSE(hasErrors(validateConfig(c)));
  const MemoryModel m = *fullSizeMemoryModel(*c.family());
  PlanRequest r = planRequestFromConfig(c, m);
  r.startMustFit = startMustFit;
  return planVram(m, r);
}

void expectSound(const VramPlan& plan) {
  ASSERT_TRUE(plan.chosen) << plan.error();
  EXPECT_LE(plan.chosen->stepPeakBytes, plan.request.budgetBytes);
  for (const PlanEstimate& c : plan.candidates)
    if (c.fits) EXPECT_GE(c.relativeStepTime, plan.chosen->relativeStepTime);
}

double totalParams(const MemoryModel& m) {
  double n = static_cast<double>(m.trunkLinearParams + m.trunkOtherParams);
  for (const BlockKind& b : m.blocks) n += static_cast<double>(b.count) * (b.linearParams + b.otherParams);
  return n;
}

}  // namespace

TEST(VramPlan, FullSizeCountsAreTheArchitectures) {
  const MemoryModel flux = fluxDevMemoryModel();
  // FLUX.1-dev: 11.9 billion parameters; networks.lora_flux's 304 transformer modules sum to
  // 4,786,176 (in + out) per unit of rank (sinter-runner --print_lora_layout --model_family flux).
  EXPECT_NEAR(totalParams(flux), 11.90e9, 0.01e9);
  EXPECT_EQ(flux.loraUnitsDenoiser, 4786176);
  EXPECT_EQ(flux.blocks.at(0).count, 19);
  EXPECT_EQ(flux.blocks.at(1).count, 38);
  EXPECT_EQ(totalParams(sdxlBaseMemoryModel()), 2567463684.0);
  // What SDXL's fp8_base stores in float8: the U-Net's Linear weights and Conv2d kernels.
  EXPECT_EQ(sdxlBaseMemoryModel().blocks.at(0).linearParams, 2232647680LL + 333209600LL);
  EXPECT_TRUE(sdxlBaseMemoryModel().fp8Capable);
  EXPECT_FALSE(fullSizeMemoryModel(Family::SD15));
}

TEST(VramPlan, FluxLoraStepTrainsAtEachIssueBudget) {
  double previousTime = 0;
  for (double gib : {80.0, 24.0, 16.0, 12.0, 8.0}) {
    SCOPED_TRACE(gib);
    const VramPlan plan = planFor(kFluxLora, gib, false);
    expectSound(plan);
    EXPECT_GE(plan.chosen->relativeStepTime, previousTime);  // less memory is never faster
    previousTime = plan.chosen->relativeStepTime;
  }
  // With room to spare nothing is given up; at 8 GiB the frozen weights are fp8 and streamed.
  const VramPlan roomy = planFor(kFluxLora, 80, false);
  EXPECT_FALSE(roomy.chosen->settings.fp8Base);
  EXPECT_EQ(roomy.chosen->settings.blocksToSwap, 0);
  EXPECT_FALSE(roomy.chosen->settings.gradientCheckpointing);
  const VramPlan tight = planFor(kFluxLora, 8, false);
  EXPECT_TRUE(tight.chosen->settings.fp8Base);
  EXPECT_GT(tight.chosen->settings.blocksToSwap, 0);
  EXPECT_TRUE(tight.chosen->settings.gradientCheckpointing);
  EXPECT_FALSE(tight.chosen->settings.cpuOffloadCheckpointing);  // not with blocks_to_swap
}

// A FLUX run's start is staged (train/flux/flux_family.h): the AE alone while latents are cached,
// CLIP-L and T5-XXL while their outputs are, then the transformer; its peak is the largest stage,
// not the sum. T5-XXL alone is 8.9 GiB in bf16; fp8_base stores its Linears in 1 byte (sd-scripts'
// fp8 T5), so 8 GiB plans; from 12 GiB up the start no longer limits the plan at all.
TEST(VramPlan, FluxRunsFitTheirStagedStart) {
  for (double gib : {8.0, 12.0, 16.0, 24.0}) {
    SCOPED_TRACE(gib);
    const VramPlan run = planFor(kFluxLora, gib), step = planFor(kFluxLora, gib, false);
    expectSound(run);
    ASSERT_TRUE(step.chosen);
    EXPECT_LE(run.chosen->startPeakBytes, gib * kGiB);
    EXPECT_GE(run.chosen->relativeStepTime, step.chosen->relativeStepTime);
    if (gib >= 12) EXPECT_EQ(run.chosen->relativeStepTime, step.chosen->relativeStepTime);
  }
  const VramPlan run8 = planFor(kFluxLora, 8);
  ASSERT_TRUE(run8.chosen) << run8.error();
  EXPECT_TRUE(run8.chosen->settings.fp8Base);
  // Its largest stage is the text encoders': T5-XXL's Linears in 1 byte, its embeddings and norms
  // and CLIP-L in bf16, beside the LoRA made before the caches (float32 weights and gradient
  // buffers, bf16 copies of both: 12 bytes a parameter).
  const MemoryModel m = fluxDevMemoryModel();
  const double encoders = static_cast<double>(m.encoderFp8LinearParams) + 2.0 * static_cast<double>(m.encoderParams - m.encoderFp8LinearParams);
  const double loraParams = run8.chosen->trainableBytes / 4;
  EXPECT_NEAR(run8.chosen->startPeakBytes, (encoders + 12 * loraParams) * 1.06, 1e6);
  EXPECT_LT(run8.chosen->startPeakBytes, 7 * kGiB);
  // fp8_base_unet keeps T5-XXL in bf16: its stage alone is over 8 GiB, and the refusal says so.
  const VramPlan unetOnly = planFor(std::string(kFluxLora) + "fp8_base_unet = true\n", 8);
  ASSERT_FALSE(unetOnly.chosen);
  EXPECT_NE(unetOnly.error().find("the training step would fit"), std::string::npos) << unetOnly.error();
  EXPECT_NE(unetOnly.error().find("the start's largest stage"), std::string::npos) << unetOnly.error();
  // The T5-XXL Linears are the architecture's: 24 layers of q, k, v, o and the gated feed-forward.
  EXPECT_EQ(m.encoderFp8LinearParams, 4630511616LL);
  EXPECT_NEAR(static_cast<double>(m.encoderParams - 123060480LL - m.encoderFp8LinearParams), 131.8e6, 0.1e6);
}

TEST(VramPlan, SdxlLoraAndFineTuneAtTheIssueBudgets) {
  expectSound(planFor(kSdxlLora, 8));
  // 6 GiB: the bf16 U-Net alone is 4.8 GiB, so only fp8_base (the U-Net in 2.4 GiB) with
  // checkpointing fits, and the plan sets it.
  const VramPlan six = planFor(kSdxlLora, 6);
  expectSound(six);
  EXPECT_TRUE(six.chosen->settings.fp8Base);
  EXPECT_TRUE(six.chosen->settings.gradientCheckpointing);
  EXPECT_LE(six.chosen->startPeakBytes, 6 * kGiB);
  for (const PlanEstimate& c : six.candidates)
    if (!c.settings.fp8Base) EXPECT_FALSE(c.fits);
  const auto applied = six.settingsToApply();
  EXPECT_NE(std::find(applied.begin(), applied.end(), std::pair<std::string, Value>{"fp8_base", Value(true)}), applied.end());
  bool said = false;
  for (const std::string& line : six.lines()) said = said || line.find("plan: fp8_base on, gradient_checkpointing on") != std::string::npos;
  EXPECT_TRUE(said);
  // fp8_base halves what it stores: the resident weights differ by the U-Net's Linear and Conv2d weights.
  PlanSettings off, on;
  on.fp8Base = true;
  const MemoryModel sdxl = sdxlBaseMemoryModel();
  EXPECT_DOUBLE_EQ(estimatePlan(sdxl, six.request, off).residentWeightsBytes - estimatePlan(sdxl, six.request, on).residentWeightsBytes,
                   static_cast<double>(sdxl.blocks[0].linearParams));
  // With room, the U-Net stays in bf16; fp8_base_unet set by the user is kept as fp8_base is.
  EXPECT_FALSE(planFor(kSdxlLora, 24).chosen->settings.fp8Base);
  const VramPlan kept = planFor(std::string(kSdxlLora) + "fp8_base_unet = true\n", 24);
  EXPECT_TRUE(kept.chosen->settings.fp8Base);
  for (const auto& [key, value] : kept.settingsToApply()) EXPECT_NE(key, "fp8_base");
  const VramPlan ft16 = planFor(kSdxlFineTune, 16), ft24 = planFor(kSdxlFineTune, 24);
  expectSound(ft16);
  expectSound(ft24);
  // 16 GiB needs a memory saver (checkpointing or the fused backward pass, which holds no
  // gradients); 24 GiB trains the plain step (RESULTS.md: 17.5 GiB).
  EXPECT_TRUE(ft16.chosen->settings.fusedBackwardPass || ft16.chosen->settings.gradientCheckpointing);
  // Both fit 16 GiB; the fused backward pass was the faster of the two on an H100 (837 against 864 ms).
  EXPECT_TRUE(ft16.chosen->settings.fusedBackwardPass);
  EXPECT_FALSE(ft24.chosen->settings.fusedBackwardPass || ft24.chosen->settings.gradientCheckpointing);
  EXPECT_LE(ft24.chosen->relativeStepTime, ft16.chosen->relativeStepTime);
  // Fused backward considered (Adafactor, no accumulation), and its estimate holds no gradients.
  bool fusedSeen = false;
  for (const PlanEstimate& c : ft16.candidates)
    if (c.settings.fusedBackwardPass) {
      fusedSeen = true;
      EXPECT_EQ(c.gradientBytes, 0);
    }
  EXPECT_TRUE(fusedSeen);
  for (const PlanEstimate& c : ft16.candidates) EXPECT_FALSE(c.settings.fp8Base);  // trains the weights fp8 would store
}

// SDXL's start is staged (train/sdxl/sdxl_family.h): the VAE alone while latents are cached, with
// its encoder's working memory at the resolution, CLIP-L and bigG while their outputs are, then the
// U-Net; its peak is the largest stage, not every model at once.
TEST(VramPlan, SdxlRunsFitTheirStagedStart) {
  const MemoryModel m = sdxlBaseMemoryModel();
  ASSERT_NE(m.autoencoderEncodeBytes, nullptr);
  // fp8_base's text-encoder Linears: CLIP-L's 12 layers and bigG's 32 (q, k, v, out and the MLP).
  EXPECT_EQ(m.encoderFp8LinearParams, 714080256LL);
  // The VAE encoder peaks in its first level: 128 channels at 1024x1024, eight tensors in the VAE's
  // dtype and 2% of rounding (measured: 2.00 GiB in bf16, 4.01 GiB in fp32). Its mid-block
  // attention's scores are chunked, so at 2048x2048 (65536 tokens, 32 GiB of unchunked float32
  // scores) the first level still decides.
  const double vae1024 = 2.0 * 1.02 * kGiB;
  EXPECT_DOUBLE_EQ(m.autoencoderEncodeBytes(1024, 1024, 2), vae1024);
  EXPECT_DOUBLE_EQ(m.autoencoderEncodeBytes(1024, 1024, 4), 2 * vae1024);
  EXPECT_DOUBLE_EQ(m.autoencoderEncodeBytes(2048, 2048, 2), 4 * vae1024);
  EXPECT_EQ(fluxDevMemoryModel().autoencoderEncodeBytes, m.autoencoderEncodeBytes);  // FLUX's AE: the same encoder
  for (double gib : {6.0, 8.0}) {
    SCOPED_TRACE(gib);
    const VramPlan run = planFor(kSdxlLora, gib);
    expectSound(run);
    const PlanEstimate& c = *run.chosen;
    EXPECT_LE(c.startPeakBytes, gib * kGiB);
    // The LoRA is there throughout: its float32 weights, their gradients, and the bf16 compute
    // copies of both (as many bytes as the float32 weights).
    const double lora = c.trainableBytes + c.gradientBytes + c.trainableBytes;
    const double fp8 = c.settings.fp8Base ? static_cast<double>(m.encoderFp8LinearParams) : 0;
    const double vae = lora + 2.0 * static_cast<double>(m.autoencoderParams) + vae1024;
    const double encoders = lora + 2.0 * (static_cast<double>(m.encoderParams) - fp8) + fp8;
    const double step = lora + c.residentWeightsBytes;
    EXPECT_NEAR(c.startPeakBytes, std::max({vae, encoders, step}) * 1.06, 1e3);
    // Every model at once with the VAE at work, as the unstaged start held them, would not fit 8 GiB in bf16.
    if (!c.settings.fp8Base) EXPECT_GT((step + 2.0 * static_cast<double>(m.encoderParams + m.autoencoderParams) + vae1024) * 1.06, gib * kGiB);
  }
  EXPECT_TRUE(planFor(kSdxlLora, 6).chosen->settings.fp8Base);
  EXPECT_FALSE(planFor(kSdxlLora, 8).chosen->settings.fp8Base);
  // Eight images encoded at once (vae_batch_size): the VAE's stage is the largest, 16.3 GiB of work
  // in bf16; no_half_vae keeps the VAE in float32: twice that, and its weights' 4 bytes.
  const VramPlan bf16 = planFor(std::string(kSdxlLora) + "vae_batch_size = 8\n", 40),
                 fp32 = planFor(std::string(kSdxlLora) + "vae_batch_size = 8\nno_half_vae = true\n", 40);
  ASSERT_TRUE(bf16.chosen && fp32.chosen);
  EXPECT_NEAR(fp32.chosen->startPeakBytes - bf16.chosen->startPeakBytes,
              (8 * vae1024 + 2.0 * static_cast<double>(m.autoencoderParams)) * 1.06, 1e3);
  // So a budget of 12 GiB fits no plan with eight at once, and the refusal names the stage, though
  // the step would fit.
  const VramPlan batched = planFor(std::string(kSdxlLora) + "vae_batch_size = 8\n", 12);
  ASSERT_FALSE(batched.chosen);
  EXPECT_NE(batched.error().find("the training step would fit"), std::string::npos) << batched.error();
  EXPECT_NE(batched.error().find("the VAE (encoding at the resolution)"), std::string::npos) << batched.error();
  // A fine-tune run's U-Net is there throughout (placed before the method attaches); the VAE's
  // stage is counted beside it.
  const VramPlan ft = planFor(kSdxlFineTune, 24);
  ASSERT_TRUE(ft.chosen);
  const double unet = static_cast<double>(totalParams(m)) * 2;
  EXPECT_NEAR(ft.chosen->startPeakBytes, (unet + ft.chosen->gradientBytes + 2.0 * static_cast<double>(m.autoencoderParams) + vae1024) * 1.06, 1e3);
  // Its gradient buffers are made with the optimizer, before the caches: none under fused_backward_pass.
  EXPECT_GT(ft.chosen->gradientBytes, 0.0);
  const VramPlan fused = planFor(std::string(kSdxlFineTune) + "fused_backward_pass = true\n", 24);
  ASSERT_TRUE(fused.chosen);
  EXPECT_EQ(fused.chosen->gradientBytes, 0.0);
  EXPECT_NEAR(fused.chosen->startPeakBytes, (unet + 2.0 * static_cast<double>(m.autoencoderParams) + vae1024) * 1.06, 1e3);
}

TEST(VramPlan, OptionsTheUserSetAreKept) {
  const VramPlan plan = planFor(std::string(kFluxLora) + "gradient_checkpointing = true\nblocks_to_swap = 4\n", 80, false);
  ASSERT_TRUE(plan.chosen);
  EXPECT_TRUE(plan.chosen->settings.gradientCheckpointing);
  EXPECT_EQ(plan.chosen->settings.blocksToSwap, 4);
  for (const auto& [key, value] : plan.settingsToApply()) {
    EXPECT_NE(key, "gradient_checkpointing");
    EXPECT_NE(key, "blocks_to_swap");
  }
  bool noted = false;
  for (const std::string& line : plan.lines()) noted |= line.find("blocks_to_swap is set in the config: kept") != std::string::npos;
  EXPECT_TRUE(noted);
  // A value equal to the default (as the app writes every field) is the planner's to choose.
  const VramPlan defaults = planFor(std::string(kFluxLora) + "gradient_checkpointing = false\n", 8, false);
  ASSERT_TRUE(defaults.chosen);
  EXPECT_TRUE(defaults.chosen->settings.gradientCheckpointing);
}

// compile_fullgraph replays the whole step as one graph: blocks_to_swap and cpu_offload_checkpointing
// would make the run refuse to start (compile_plan.cpp), so the plan keeps to capturable settings,
// and a budget only they reach is refused naming compile_fullgraph and what turning it off reaches.
TEST(VramPlan, CompileFullgraphKeepsTheStepCapturable) {
  const std::string captured = std::string(kFluxLora) + "compile = true\ncompile_mode = \"reduce-overhead\"\ncompile_fullgraph = true\n";
  const VramPlan roomy = planFor(captured, 24, false);
  expectSound(roomy);
  EXPECT_TRUE(roomy.request.wholeStepCaptured);
  EXPECT_EQ(roomy.chosen->settings.blocksToSwap, 0);
  EXPECT_FALSE(roomy.chosen->settings.cpuOffloadCheckpointing);
  bool passedOver = false;
  for (const PlanEstimate& c : roomy.candidates) {
    EXPECT_EQ(c.breaksCapture, c.settings.blocksToSwap > 0 || c.settings.cpuOffloadCheckpointing);
    if (c.breaksCapture) {
      EXPECT_FALSE(c.fits);
      passedOver = true;
    }
  }
  EXPECT_TRUE(passedOver);
  // 12 GiB needs swapped blocks: refused with compile_fullgraph, planned without it.
  const VramPlan tight = planFor(captured, 12, false);
  ASSERT_FALSE(tight.chosen);
  EXPECT_NE(tight.error().find("compile_fullgraph"), std::string::npos) << tight.error();
  EXPECT_NE(tight.error().find("with compile_fullgraph off the smallest reachable is"), std::string::npos) << tight.error();
  const VramPlan perBlock = planFor(std::string(kFluxLora) + "compile = true\ncompile_mode = \"reduce-overhead\"\n", 12, false);
  EXPECT_FALSE(perBlock.request.wholeStepCaptured);
  expectSound(perBlock);
  EXPECT_GT(perBlock.chosen->settings.blocksToSwap, 0);
}

TEST(VramPlan, NothingFitsNamesTheSmallestReachableBudget) {
  const VramPlan plan = planFor(kFluxLora, 1);
  EXPECT_FALSE(plan.chosen);
  for (const PlanEstimate& c : plan.candidates) EXPECT_GE(c.limitingBytes, plan.smallestReachableBytes);
  EXPECT_GT(plan.smallestReachableBytes, 1 * kGiB);
  const std::string e = plan.error();
  EXPECT_NE(e.find("vram_budget_gb"), std::string::npos);
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.2f GiB", plan.smallestReachableBytes / kGiB);
  EXPECT_NE(e.find(gib), std::string::npos) << e;
  // That budget does fit.
  const VramPlan enough = planFor(kFluxLora, std::ceil(plan.smallestReachableBytes / kGiB * 100) / 100 + 0.001);
  EXPECT_TRUE(enough.chosen);
}

TEST(VramPlan, ALargerBatchNeedsMoreAndIsKept) {
  const VramPlan one = planFor(kSdxlLora, 40), four = planFor(std::string(kSdxlLora) + "train_batch_size = 4\n", 40);
  ASSERT_TRUE(one.chosen && four.chosen);
  EXPECT_EQ(four.request.batch, 4);
  const PlanSettings s = one.chosen->settings;
  EXPECT_GT(estimatePlan(*fullSizeMemoryModel(Family::SDXL), four.request, s).stepPeakBytes, one.chosen->stepPeakBytes);
}

TEST(VramPlan, TheCorrectionRaisesEstimates) {
  Config c = parse(std::string(kFluxLora) + "vram_budget_gb = 16\n");
  const MemoryModel m = fluxDevMemoryModel();
  const PlanSettings s{true, 8, true, false, false};
  const double plain = estimatePlan(m, planRequestFromConfig(c, m), s).stepPeakBytes;
  EXPECT_NEAR(estimatePlan(m, planRequestFromConfig(c, m, 1.25), s).stepPeakBytes, plain * 1.25, plain * 1e-12);
  EXPECT_EQ(estimatePlan(m, planRequestFromConfig(c, m, 0.5), s).stepPeakBytes, plain);  // never lowered
}

TEST(VramBudgetRecord, RoundTripAndDamagedFile) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("sinter_vram_record_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string file = (dir / "sub" / "vram_budget_corrections.json").string();
  const std::string key = vramRecordKey("flux", "lora", 1024, 1024, 1);
  EXPECT_EQ(key, "flux lora 1024x1024 batch 1");
  EXPECT_EQ(readVramCorrection(file, key), 1.0);  // no file
  EXPECT_EQ(recordVramPeak(file, key, 10.0, 9.0, 1.0), 0.0);  // under: nothing written
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_DOUBLE_EQ(recordVramPeak(file, key, 10.0, 12.0, 1.0), 1.2);
  EXPECT_DOUBLE_EQ(readVramCorrection(file, key), 1.2);
  // The next run planned with 1.2 and went over again: the corrections compound.
  EXPECT_DOUBLE_EQ(recordVramPeak(file, key, 12.0, 13.2, 1.2), 1.2 * 1.1);
  EXPECT_EQ(readVramCorrection(file, "sdxl lora 1024x1024 batch 1"), 1.0);  // other keys untouched
  { std::ofstream(file) << "{not json"; }
  EXPECT_EQ(readVramCorrection(file, key), 1.0);
  EXPECT_DOUBLE_EQ(recordVramPeak(file, key, 10.0, 11.0, 1.0), 1.1);
  EXPECT_DOUBLE_EQ(readVramCorrection(file, key), 1.1);
  std::filesystem::remove_all(dir);
}

TEST(VramPlan, TheOptionIsValidated) {
  // The value's error, from reading the file or from validateConfig, naming the key.
  auto errorFor = [](const std::string& toml) -> std::string {
    try {
      for (const Diagnostic& d : validateConfig(parse(toml)))
        if (d.key == "vram_budget_gb" && d.severity == Severity::Error) return d.format();
    } catch (const ConfigError& e) {
      for (const Diagnostic& d : e.diagnostics())
        if (d.key == "vram_budget_gb") return d.format();
    }
    return "";
  };
  EXPECT_NE(errorFor("model_family = \"flux\"\nvram_budget_gb = -2\n").find("-2"), std::string::npos);
  EXPECT_NE(errorFor("model_family = \"flux\"\nvram_budget_gb = 5000\n"), "");
  // SD 1.x/2.x have no memory model: the option is ignored there, with a warning as any option of
  // another family.
  bool warned = false;
  for (const Diagnostic& d : validateConfig(parse("model_family = \"sd15\"\nvram_budget_gb = 8\n")))
    warned |= d.key == "vram_budget_gb" && d.severity == Severity::Warning;
  EXPECT_TRUE(warned);
  EXPECT_EQ(errorFor("model_family = \"flux\"\nvram_budget_gb = 12.5\n"), "");
  EXPECT_EQ(errorFor("model_family = \"sdxl\"\nvram_budget_gb = 0\n"), "");  // 0: off
  EXPECT_NE(errorFor("model_family = \"flux\"\nvram_budget_gb = \"lots\"\n").find("must be a number"), std::string::npos);
}

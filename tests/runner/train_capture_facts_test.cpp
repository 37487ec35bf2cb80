// What a run's config keeps out of CUDA graphs, and the plan it leads to on a CUDA build and
// device: blocks_to_swap refuses whole-step capture (fullgraph) and keeps only the swapped blocks
// out of per-block capture.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "train/bench/capture_facts.h"
#include "train/parts/family_registration.h"

using namespace sinter;

namespace {

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

Config swapConfig(bool fullgraph, long long blocksToSwap) {
  Config c;
  c.set("model_family", std::string("flux"));
  c.set("network_train_unet_only", true);
  c.set("blocks_to_swap", blocksToSwap);
  c.set("compile", true);
  c.set("compile_backend", std::string("inductor"));
  c.set("compile_mode", std::string("reduce-overhead"));
  c.set("compile_dynamic", std::string("auto"));
  c.set("compile_fullgraph", fullgraph);
  return c;
}

// The facts of a CUDA build training on a CUDA device, whatever this machine is.
compile::CaptureFacts onCuda(const Config& c) {
  compile::CaptureFacts facts = train::captureFacts(c, torch::kCPU);
  facts.graphsInBuild = true;
  facts.cudaDevice = true;
  return facts;
}

}  // namespace

TEST(CaptureFacts, BlockSwapRefusesTheWholeStepAndExcludesTheSwappedBlocks) {
  const Config whole = swapConfig(true, 8);
  const compile::CompilePlan refused = compile::planCompile(whole, train::compileTargetsFor(Family::FLUX), onCuda(whole));
  ASSERT_TRUE(refused.fatal.has_value());
  EXPECT_NE(refused.fatal->find("blocks_to_swap"), std::string::npos) << *refused.fatal;
  EXPECT_FALSE(refused.captureSteps);

  const Config perBlock = swapConfig(false, 8);
  const compile::CompilePlan blocks = compile::planCompile(perBlock, train::compileTargetsFor(Family::FLUX), onCuda(perBlock));
  EXPECT_FALSE(blocks.fatal.has_value());
  EXPECT_TRUE(blocks.captureRegions);
  EXPECT_TRUE(mentions(blocks.warnings, "Linear layers excluded from capture"));
  EXPECT_TRUE(mentions(blocks.lines(), "Linear layers excluded from capture"));

  const Config none = swapConfig(true, 0);
  const compile::CompilePlan whole0 = compile::planCompile(none, train::compileTargetsFor(Family::FLUX), onCuda(none));
  EXPECT_FALSE(whole0.fatal.has_value());
  EXPECT_TRUE(whole0.captureSteps);
  EXPECT_FALSE(mentions(whole0.warnings, "Linear layers excluded"));
}

// Text encoders that train: SDXL's and FLUX's staged steps run them from staged token ids, so
// fullgraph captures the whole step and the plan names them inside it.
TEST(CaptureFacts, TrainedTextEncodersAreInsideTheCapturedStep) {
  Config sdxl = swapConfig(true, 0);
  sdxl.set("model_family", std::string("sdxl"));
  sdxl.set("network_train_unet_only", false);
  const compile::CompilePlan whole = compile::planCompile(sdxl, train::compileTargetsFor(Family::SDXL), onCuda(sdxl));
  EXPECT_FALSE(whole.fatal.has_value()) << *whole.fatal;
  EXPECT_TRUE(whole.captureSteps);
  EXPECT_TRUE(mentions(whole.lines(), "region: text encoders (CLIP-L and OpenCLIP bigG), their LoRA modules trained: forward and backward inside"));

  // U-Net only: nothing about text encoders.
  sdxl.set("network_train_unet_only", true);
  EXPECT_FALSE(mentions(compile::planCompile(sdxl, train::compileTargetsFor(Family::SDXL), onCuda(sdxl)).lines(), "text encoders"));

  // FLUX: CLIP-L inside the step, with T5-XXL's frozen forward or its cached outputs; T5-XXL's
  // LoRA too with train_t5xxl.
  Config flux = swapConfig(true, 0);
  flux.set("network_train_unet_only", false);
  const compile::CompilePlan fluxWhole = compile::planCompile(flux, train::compileTargetsFor(Family::FLUX), onCuda(flux));
  EXPECT_FALSE(fluxWhole.fatal.has_value()) << *fluxWhole.fatal;
  EXPECT_TRUE(fluxWhole.captureSteps);
  EXPECT_TRUE(mentions(fluxWhole.lines(), "region: text encoders (CLIP-L, with T5-XXL's frozen forward), their LoRA modules trained: forward and backward"));
  flux.set("cache_text_encoder_outputs", true);
  EXPECT_TRUE(mentions(compile::planCompile(flux, train::compileTargetsFor(Family::FLUX), onCuda(flux)).lines(), "text encoders (CLIP-L; T5-XXL's outputs cached)"));
  flux.set("cache_text_encoder_outputs", false);
  flux.set("network_args", StringList{"train_t5xxl=True"});
  EXPECT_TRUE(mentions(compile::planCompile(flux, train::compileTargetsFor(Family::FLUX), onCuda(flux)).lines(), "text encoders (CLIP-L and T5-XXL), their LoRA modules trained"));
}

// Textual inversion and a LoRA run's embeddings: the new tokens' rows train inside the encoders,
// which the whole-step graph holds (SDXL stages their token ids) as it holds LoRA's modules.
TEST(CaptureFacts, NewTokenRowsAreInsideTheCapturedStep) {
  Config ti = swapConfig(true, 0);
  ti.set("model_family", std::string("sdxl"));
  ti.set("training_type", std::string("textual_inversion"));
  ti.set("token_string", std::string("sks"));
  const compile::CompilePlan whole = compile::planCompile(ti, train::compileTargetsFor(Family::SDXL), onCuda(ti));
  EXPECT_FALSE(whole.fatal.has_value()) << *whole.fatal;
  EXPECT_TRUE(whole.captureSteps);
  EXPECT_TRUE(mentions(whole.lines(), "region: text encoders (CLIP-L and OpenCLIP bigG), the new tokens' embedding rows trained: "
                                      "forward and backward inside the whole-step graph"));

  Config pivotal = swapConfig(true, 0);
  pivotal.set("model_family", std::string("sdxl"));
  pivotal.set("embeddings", StringList{"token_string=sks init_word=dog"});
  const compile::CompilePlan unetOnly = compile::planCompile(pivotal, train::compileTargetsFor(Family::SDXL), onCuda(pivotal));
  EXPECT_FALSE(unetOnly.fatal.has_value()) << *unetOnly.fatal;
  EXPECT_TRUE(mentions(unetOnly.lines(), "(CLIP-L and OpenCLIP bigG), the new tokens' embedding rows trained"));
  pivotal.set("network_train_unet_only", false);
  EXPECT_TRUE(mentions(compile::planCompile(pivotal, train::compileTargetsFor(Family::SDXL), onCuda(pivotal)).lines(),
                       "their LoRA modules and the new tokens' embedding rows trained"));
}

// The plan names the mechanisms this run has: LoRA's GEMM epilogue for a LoRA run only, the fused
// AdamW kernel only where the optimizer is AdamW.
TEST(CaptureFacts, ThePlanNamesOnlyTheMechanismsTheRunHas) {
  Config lora = swapConfig(true, 0);
  lora.set("model_family", std::string("sdxl"));
  EXPECT_TRUE(mentions(compile::planCompile(lora, train::compileTargetsFor(Family::SDXL), onCuda(lora)).lines(), "LoRA: the base GEMM"));

  Config finetune = lora;
  finetune.set("training_type", std::string("finetune"));
  finetune.set("optimizer_type", std::string("Adafactor"));
  const std::vector<std::string> lines = compile::planCompile(finetune, train::compileTargetsFor(Family::SDXL), onCuda(finetune)).lines();
  EXPECT_FALSE(mentions(lines, "LoRA:"));
  EXPECT_FALSE(mentions(lines, "fused AdamW"));
  EXPECT_TRUE(mentions(lines, "whole training step"));
}

// SD 1.x/2.x have no compile panel: on CUDA the runner captures their whole step by its own choice
// (the text encoder inside it where it trains), runs it eagerly where something keeps it out of a
// graph, and not at all when switched off (SINTER_SD_CAPTURE=0) or without graphs.
TEST(CaptureFacts, SdStepsAreCapturedByTheRunnersOwnChoice) {
  Config sd;
  sd.set("model_family", std::string("sd15"));
  const compile::CompilePlan captured =
      compile::planAutomaticCapture(sd, train::compileTargetsFor(Family::SD15), onCuda(sd), "SD 1.x", true);
  EXPECT_FALSE(captured.fatal.has_value());
  EXPECT_TRUE(captured.captureSteps);
  EXPECT_TRUE(captured.precapture);
  EXPECT_NE(captured.headline().find("SD 1.x: the runner captures the training step as CUDA graphs by its own choice"), std::string::npos)
      << captured.headline();
  // sd-scripts' default trains the text encoder's LoRA: it runs inside the step from staged ids.
  EXPECT_TRUE(mentions(captured.lines(), "region: text encoders (CLIP ViT-L), their LoRA modules trained"));

  Config barrier = sd;
  barrier.set("multires_noise_iterations", 6LL);
  const compile::CompilePlan eager =
      compile::planAutomaticCapture(barrier, train::compileTargetsFor(Family::SD15), onCuda(barrier), "SD 1.x", true);
  EXPECT_FALSE(eager.fatal.has_value());
  EXPECT_FALSE(eager.captureSteps);
  EXPECT_FALSE(eager.captureRegions);
  EXPECT_NE(eager.headline().find("the training step runs eagerly"), std::string::npos) << eager.headline();
  EXPECT_NE(eager.headline().find("multires_noise_iterations"), std::string::npos) << eager.headline();

  const compile::CompilePlan off =
      compile::planAutomaticCapture(sd, train::compileTargetsFor(Family::SD15), onCuda(sd), "SD 1.x", false);
  EXPECT_FALSE(off.captureSteps);
  EXPECT_EQ(off.headline(), "compile: off");
  compile::CaptureFacts cpu = train::captureFacts(sd, torch::kCPU);
  EXPECT_FALSE(compile::planAutomaticCapture(sd, train::compileTargetsFor(Family::SD15), cpu, "SD 1.x", true).captureSteps);
}

// The compile plan names each family's denoiser, regions and fused kernels from its registration.
TEST(CaptureFacts, EachFamilysRegistrationNamesItsCompiledParts) {
  Config c;
  c.set("compile", true);
  c.set("compile_mode", std::string("reduce-overhead"));
  compile::CaptureFacts facts;
  facts.cudaDevice = true;
  facts.graphsInBuild = true;
  const compile::CompilePlan flux = compile::planCompile(c, train::compileTargetsFor(Family::FLUX), facts);
  EXPECT_EQ(flux.regions, std::vector<std::string>{"DiT model double and single blocks, forward and backward, one region each"});
  for (Family family : {Family::SDXL, Family::SD15, Family::SD2}) {
    const compile::CompilePlan unet = compile::planCompile(c, train::compileTargetsFor(family), facts);
    EXPECT_EQ(unet.regions, std::vector<std::string>{"U-Net input, middle and output blocks, forward and backward, one region each"});
    EXPECT_EQ(train::compileTargetsFor(family).fusedKernels, "GEGLU, GroupNorm+SiLU");
  }
  EXPECT_EQ(train::compileTargetsFor(std::nullopt).model, "U-Net");  // no family known yet: SDXL's, as before detection
  EXPECT_NE(train::compileTargetsFor(Family::FLUX).fusedKernelsDetail.find("QK RMSNorm+RoPE"), std::string::npos);
}

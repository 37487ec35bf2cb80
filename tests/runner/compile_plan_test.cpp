// The compile plan for every combination of the compile options, on either kind of build and
// device: what is captured, what is unavailable and why, what is fatal (DESIGN.md §6).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compile/compile_plan.h"

using namespace sinter;
using namespace sinter::compile;

namespace {

// What the U-Net families' and FLUX's registrations give the plan (train_capture_facts_test checks
// the plan with the registrations' own).
const CompileTargets kUnet{"U-Net", "input, middle and output blocks", "GEGLU, GroupNorm+SiLU",
                           "GEGLU (value * gelu(gate)) and GroupNorm+SiLU (float32 statistics, rounded once)"};
const CompileTargets kDit{"DiT model", "double and single blocks",
                          "QK RMSNorm+RoPE, LayerNorm+modulate, gated residual, attention+GELU join",
                          "QK RMSNorm+RoPE (...), LayerNorm+modulate and the gated residual (...), and the single blocks' "
                          "attention+GELU join"};

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

Config compileConfig(const std::string& backend, const std::string& mode, const std::string& dynamic, bool fullgraph) {
  Config c;
  c.set("compile", true);
  c.set("compile_backend", backend);
  c.set("compile_mode", mode);
  c.set("compile_dynamic", dynamic);
  c.set("compile_fullgraph", fullgraph);
  return c;
}

}  // namespace

TEST(CompilePlan, OffPlansNothing) {
  const CompilePlan plan = planCompile(Config{}, kUnet, CaptureFacts{true, true, {}});
  EXPECT_EQ(plan.headline(), "compile: off");
  EXPECT_FALSE(plan.captureSteps);
  EXPECT_TRUE(plan.mechanisms.empty());
  EXPECT_TRUE(plan.unavailable.empty());
}

TEST(CompilePlan, EveryCombination) {
  const std::vector<std::string> backends{"inductor", "cudagraphs", "eager", "aot_eager"};
  const std::vector<std::string> modes{"default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"};
  const std::vector<std::string> barrier{"the text encoders train: why"};
  const std::vector<std::string> regionBarrier{"gradient_checkpointing with network_dropout: why"};
  int combinations = 0;
  for (const auto& backend : backends)
    for (const auto& mode : modes)
      for (const std::string dynamic : {"auto", "false", "true"})
        for (bool fullgraph : {false, true})
          for (bool inBuild : {false, true})
            for (bool cuda : {false, true})
              for (bool blocked : {false, true})
                for (bool regionBlocked : {false, true})
                  for (bool tunableOp : {false, true}) {
                ++combinations;
                const Config config = compileConfig(backend, mode, dynamic, fullgraph);
                CaptureFacts facts{inBuild, cuda, blocked ? barrier : std::vector<std::string>{}, tunableOp && inBuild,
                                   regionBlocked ? regionBarrier : std::vector<std::string>{}};
                facts.fusedKernelsInBuild = inBuild;
                const CompilePlan plan = planCompile(config, kUnet, facts);
                const std::string what = backend + "/" + mode + "/" + dynamic + (fullgraph ? "/fullgraph" : "") +
                                         (inBuild ? "/cuda-build" : "/cpu-build") + (cuda ? "/gpu" : "/cpu") + (blocked ? "/blocked" : "") +
                                         (regionBlocked ? "/blocks-blocked" : "") + (tunableOp ? "/tunableop" : "");
                SCOPED_TRACE(what);
                const bool graphsAsked = backend == "cudagraphs" || (backend == "inductor" && (mode == "reduce-overhead" || mode == "max-autotune"));
                const bool graphsPossible = graphsAsked && dynamic != "true" && inBuild && cuda;
                // fullgraph: the whole step or a fatal error; else each block, or the blocks eager with a warning.
                EXPECT_EQ(plan.captureSteps, graphsPossible && fullgraph && !blocked);
                EXPECT_EQ(plan.captureRegions, graphsPossible && !fullgraph && !regionBlocked);
                const bool captures = plan.captureSteps || plan.captureRegions;
                EXPECT_EQ(plan.precapture, captures && dynamic == "auto");
                EXPECT_EQ(plan.fatal.has_value(), graphsPossible && blocked && fullgraph);
                if (plan.fatal) EXPECT_NE(plan.fatal->find("text encoders train"), std::string::npos);
                EXPECT_EQ(mentions(plan.warnings, "input, middle and output blocks are not captured and run eagerly: gradient_checkpointing"),
                          graphsPossible && regionBlocked && !fullgraph);
                EXPECT_EQ(!plan.regions.empty(), captures);
                EXPECT_EQ(mentions(plan.regions, "whole training step"), plan.captureSteps);
                EXPECT_EQ(mentions(plan.regions, "U-Net input, middle and output blocks, forward and backward"), plan.captureRegions);
                EXPECT_EQ(mentions(plan.mechanisms, "CUDA graphs"), captures);
                EXPECT_EQ(mentions(plan.mechanisms, "the rest of the step runs eagerly"), plan.captureRegions);
                if (graphsAsked && !captures) EXPECT_TRUE(mentions(plan.unavailable, "CUDA graphs: "));
                if (graphsAsked && dynamic == "true") EXPECT_TRUE(mentions(plan.unavailable, "dynamic=True"));
                if (graphsAsked && dynamic != "true" && !inBuild) EXPECT_TRUE(mentions(plan.unavailable, "this build has no CUDA"));
                if (graphsAsked && dynamic != "true" && inBuild && !cuda) EXPECT_TRUE(mentions(plan.unavailable, "training on the CPU"));
                EXPECT_EQ(plan.checkCapture, backend == "aot_eager");
                // aot_eager reports what would break the capture fullgraph asks for: the step's, or the blocks'.
                EXPECT_EQ(mentions(plan.warnings, "would break capture"), backend == "aot_eager" && (fullgraph ? blocked : regionBlocked));
                const bool autotune = backend == "inductor" && (mode == "max-autotune" || mode == "max-autotune-no-cudagraphs");
                // Autotuning only where the step replays graphs: uncaptured, a step bound by its launches ran
                // slower with cuDNN's benchmarked algorithms and TunableOp's per-call lookup.
                EXPECT_EQ(plan.cudnnBenchmark, autotune && cuda && dynamic != "true" && captures);
                EXPECT_EQ(plan.tuneGemms, plan.cudnnBenchmark && facts.gemmTuningInBuild);
                EXPECT_EQ(mentions(plan.unavailable, "autotuning (cuDNN convolution benchmarks, TunableOp GEMMs): only for captured steps"),
                          autotune && cuda && dynamic != "true" && !captures);
                if (autotune && !plan.tuneGemms) EXPECT_TRUE(mentions(plan.unavailable, "autotuning"));
                EXPECT_EQ(mentions(plan.mechanisms, "fused scaled-dot-product attention"), backend == "inductor");
                EXPECT_EQ(plan.fuseKernels, backend == "inductor" && cuda && inBuild);
                EXPECT_EQ(mentions(plan.mechanisms, "fused kernels: GEGLU"), plan.fuseKernels);
                EXPECT_EQ(mentions(plan.unavailable, "fused kernels (GEGLU, GroupNorm+SiLU): "), backend == "inductor" && !plan.fuseKernels);
                if (backend == "eager") EXPECT_TRUE(mentions(plan.mechanisms, "stock kernels"));
                EXPECT_EQ(plan.headline().rfind("Compiling U-Net with torch.compile: backend=" + backend, 0), 0u);
                EXPECT_EQ(plan.cacheLimit, 8);
                // Every line of the plan is rendered, once.
                EXPECT_EQ(plan.lines().size(), 2 + plan.mechanisms.size() + plan.regions.size() + plan.unavailable.size() +
                                                   plan.warnings.size() + (plan.fatal ? 1 : 0));
              }
  EXPECT_EQ(combinations, 4 * 4 * 3 * 2 * 2 * 2 * 2 * 2 * 2);
}

TEST(CompilePlan, FluxRegionsAreItsDoubleAndSingleBlocks) {
  const CompilePlan plan = planCompile(compileConfig("inductor", "reduce-overhead", "auto", false), kDit, CaptureFacts{true, true, {}});
  EXPECT_TRUE(plan.captureRegions);
  EXPECT_EQ(plan.regions, std::vector<std::string>{"DiT model double and single blocks, forward and backward, one region each"});
  // Its own fused kernels, named where they are on and where they are not.
  CaptureFacts inBuild{true, true, {}};
  inBuild.fusedKernelsInBuild = true;
  const CompilePlan fused = planCompile(compileConfig("inductor", "default", "auto", false), kDit, inBuild);
  EXPECT_TRUE(fused.fuseKernels);
  EXPECT_TRUE(mentions(fused.mechanisms, "fused kernels: QK RMSNorm+RoPE"));
  EXPECT_TRUE(mentions(fused.mechanisms, "LayerNorm+modulate and the gated residual"));
  EXPECT_TRUE(mentions(fused.mechanisms, "attention+GELU join"));
  EXPECT_FALSE(mentions(fused.mechanisms, "GEGLU"));
  CaptureFacts noKernels = inBuild;
  noKernels.fusedKernelsInBuild = false;
  const CompilePlan unfused = planCompile(compileConfig("inductor", "default", "auto", false), kDit, noKernels);
  EXPECT_FALSE(unfused.fuseKernels);
  EXPECT_TRUE(mentions(unfused.unavailable,
                       "fused kernels (QK RMSNorm+RoPE, LayerNorm+modulate, gated residual, attention+GELU join): this build has "
                       "no CUDA kernels"));
}

TEST(CompilePlan, CacheLimitAndDeprecatedCompileArgs) {
  Config c = compileConfig("inductor", "reduce-overhead", "false", true);
  c.set("compile_cache_size_limit", 3LL);
  EXPECT_EQ(planCompile(c, kUnet, CaptureFacts{true, true, {}}).cacheLimit, 3);
  c.set("compile_cache_size_limit", 0LL);  // 0: the default
  EXPECT_EQ(planCompile(c, kUnet, CaptureFacts{true, true, {}}).cacheLimit, 8);
  c.set("compile_args", StringList{"cudagraphs", "default", "false", "true"});
  const CompilePlan args = planCompile(c, kDit, CaptureFacts{true, true, {}});
  EXPECT_EQ(args.cacheLimit, 32);
  EXPECT_TRUE(args.captureSteps);
  EXPECT_FALSE(args.precapture);  // dynamic=False: each signature captured when first seen
  EXPECT_NE(args.headline().find("Compiling DiT model with torch.compile: backend=cudagraphs"), std::string::npos);
  EXPECT_TRUE(mentions(args.request.notes, "compile_args is deprecated"));
}

TEST(CompilePlan, EventCarriesThePlan) {
  const CompilePlan plan = planCompile(compileConfig("inductor", "max-autotune", "auto", true), kUnet, CaptureFacts{true, true, {}});
  const events::CompilePlan e = plan.event();
  EXPECT_TRUE(e.enabled);
  EXPECT_EQ(e.mode, "max-autotune");
  EXPECT_EQ(e.mechanisms, plan.mechanisms);
  EXPECT_EQ(e.regions, std::vector<std::string>{"whole training step"});
  EXPECT_EQ(e.unavailable, plan.unavailable);
}

TEST(CompilePlan, EncodersCapturedInTheirCachingPassesWhereTheModeCaptures) {
  Config c = compileConfig("inductor", "reduce-overhead", "auto", false);
  c.set("compile_vae", true);
  c.set("compile_text_encoders", true);
  const std::vector<std::string> barrier{"the text encoders train: why"};
  const CompilePlan gpu = planCompile(c, kUnet, CaptureFacts{true, true, barrier});
  EXPECT_TRUE(gpu.captureVae);
  EXPECT_TRUE(gpu.captureTextEncoders);
  EXPECT_FALSE(gpu.captureSteps);  // the step has a barrier; the caching passes run without gradients
  EXPECT_TRUE(mentions(gpu.mechanisms, "VAE: CUDA graphs of its caching pass"));
  EXPECT_TRUE(mentions(gpu.regions, "text encoders (caching pass)"));

  const CompilePlan cpu = planCompile(c, kUnet, CaptureFacts{true, false, {}});
  EXPECT_FALSE(cpu.captureVae || cpu.captureTextEncoders);
  EXPECT_TRUE(mentions(cpu.unavailable, "VAE capture: training on the CPU"));
  EXPECT_TRUE(mentions(planCompile(c, kUnet, CaptureFacts{false, false, {}}).unavailable, "text encoders capture: this build has no CUDA"));

  c.set("compile_mode", "default");
  const CompilePlan plain = planCompile(c, kUnet, CaptureFacts{true, true, {}});
  EXPECT_FALSE(plain.captureVae);
  EXPECT_TRUE(mentions(plain.unavailable, "VAE capture: this mode captures nothing"));
  c.set("compile_mode", "reduce-overhead");
  c.set("compile_dynamic", "true");
  EXPECT_TRUE(mentions(planCompile(c, kUnet, CaptureFacts{true, true, {}}).unavailable, "VAE capture: dynamic=True"));
  c.set("compile", false);
  const CompilePlan off = planCompile(c, kUnet, CaptureFacts{true, true, {}});
  EXPECT_FALSE(off.captureVae || off.captureTextEncoders);
}

TEST(CompilePlan, SeveralRanksSayWhereTheAllReduceRuns) {
  CaptureFacts facts{true, true, {}};
  facts.worldSize = 2;
  facts.collectives = "NCCL 2.27.7";
  facts.collectivesCapturable = true;
  // Whole step: the all-reduce inside its graph, and every signature captured before step 1 even
  // with dynamic=false (a capture's warm-up steps all-reduce, so all ranks capture together).
  CompilePlan plan = planCompile(compileConfig("inductor", "reduce-overhead", "false", true), kUnet, facts);
  EXPECT_TRUE(plan.captureSteps);
  EXPECT_TRUE(plan.precapture);
  EXPECT_TRUE(mentions(plan.lines(), "2 ranks: the gradients' all-reduce (NCCL 2.27.7) is inside each captured step")) << plan.lines()[2];
  EXPECT_TRUE(mentions(plan.lines(), "every planned signature captured before step 1"));
  // An NCCL that graphs cannot hold: the blocks are captured and the all-reduce follows their replay.
  facts.collectives = "NCCL 2.8.4";
  facts.collectivesCapturable = false;
  plan = planCompile(compileConfig("inductor", "reduce-overhead", "auto", true), kUnet, facts);
  EXPECT_FALSE(plan.fatal);
  EXPECT_FALSE(plan.captureSteps);
  EXPECT_TRUE(plan.captureRegions);
  EXPECT_TRUE(mentions(plan.warnings, "NCCL 2.8.4 cannot be captured in a CUDA graph"));
  EXPECT_TRUE(mentions(plan.lines(), "all-reduced (NCCL 2.8.4) outside the blocks' graphs"));
  // Per block: the all-reduce outside the graphs, bucket by bucket.
  facts.collectivesCapturable = true;
  plan = planCompile(compileConfig("inductor", "reduce-overhead", "auto", false), kDit, facts);
  EXPECT_TRUE(plan.captureRegions);
  EXPECT_TRUE(mentions(plan.mechanisms, "outside the blocks' graphs, bucket by bucket"));
  // One process: nothing about ranks.
  facts.worldSize = 1;
  plan = planCompile(compileConfig("inductor", "reduce-overhead", "auto", true), kUnet, facts);
  EXPECT_FALSE(mentions(plan.lines(), "ranks"));
}

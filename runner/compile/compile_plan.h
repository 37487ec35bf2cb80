#pragma once
// The compile plan: from the resolved compile request, the model family and the facts of the run,
// what the runner turns on (DESIGN.md §6), which regions it captures, what is unavailable in this
// build or for this run and why. Built and rendered in one place, for the run's log and
// `compile_plan` event and for --dry_run; the training loop applies it (train/capture/step_executor.h).
#include <optional>
#include <string>
#include <vector>

#include "core/compile_settings.h"
#include "core/config.h"
#include "compile/cuda_graph.h"
#include "compile/gemm_tuning.h"
#include "core/events.h"
#include "kernels/fused_kernels.h"

namespace sinter::compile {

// What the run says about its step, for deciding whether it can be captured.
struct CaptureFacts {
  bool graphsInBuild = cudaGraphsCompiledIn();  // a CUDA libtorch (tests plan for either build)
  bool cudaDevice = false;            // the run trains on a CUDA device
  std::vector<std::string> barriers;  // what keeps the step out of a graph, each "what: why"
  bool gemmTuningInBuild = gemmTuningCompiledIn();  // TunableOp (a CUDA libtorch >= 2.5)
  std::vector<std::string> regionBarriers;  // what keeps the model's blocks out of graphs, each "what: why"
  std::vector<std::string> regionExclusions;  // what keeps some blocks out of graphs (the rest captured), each "what: why"
  bool fusedKernelsInBuild = kernels::fusedKernelsCompiledIn();  // the project's CUDA kernels (nvcc)
  int worldSize = 1;                   // ranks of a data-parallel run (torchrun's WORLD_SIZE)
  std::string collectives;             // what all-reduces their gradients ("NCCL 2.27.7", "Gloo")
  bool collectivesCapturable = false;  // NCCL >= 2.9.6: an all-reduce can be inside a captured step
  std::string textEncodersInStep;      // trained text encoders the step runs from staged token ids, named; or empty
  std::string fusedOptimizer;         // the optimizer's fused kernel ("fused AdamW, one kernel per parameter group"), or empty
  bool loraModules = false;            // the run trains LoRA modules (the frozen GEMM's LoRA epilogue)
  std::string textEncodersTrainedPart;  // what of them trains ("their LoRA modules", "the new tokens' embedding rows")
};

struct CompilePlan {
  CompileRequest request;
  std::string model;                     // "U-Net" (SDXL), "DiT model" (FLUX), as sd-scripts names them
  std::string blocks;                    // the model's regions: "input, middle and output blocks"
  std::vector<std::string> mechanisms;   // what is on
  std::vector<std::string> regions;      // what is captured
  std::vector<std::string> unavailable;  // "what: why"
  std::vector<std::string> warnings;     // what the run does other than asked (fullgraph=false: runs eagerly)
  std::optional<std::string> fatal;      // fullgraph=true and the step cannot be captured: the cause

  // Applying it:
  bool captureSteps = false;     // fullgraph: the whole step as one CUDA graph per shape signature
  bool captureRegions = false;   // not fullgraph: each block's forward and backward as graphs per signature
  bool precapture = false;       // dynamic=auto: every planned signature before step 1; false: on first sight
  int cacheLimit = kDefaultCompileCacheSizeLimit;  // captured signatures at most (per region)
  bool checkCapture = false;     // aot_eager: report what would break capture, run eagerly
  bool cudnnBenchmark = false;   // max-autotune: cuDNN picks convolution algorithms during warm-up
  bool fuseKernels = false;      // inductor on CUDA: the family's fused kernels (kernels/fused_kernels.h)
  bool tuneGemms = false;        // max-autotune: TunableOp picks GEMM algorithms during warm-up (gemm_tuning.h)
  bool captureVae = false;           // compile_vae: the latent caching pass replayed from graphs per batch shape
  bool captureTextEncoders = false;  // compile_text_encoders: the text caching pass likewise
  // Set where the runner chose the plan itself, not the compile settings (planAutomaticCapture): what
  // it is, for the headline; a shape that cannot be captured then runs eagerly instead of failing.
  std::string automatic;

  events::CompilePlan event() const;
  // The log line sd-scripts users know ("Compiling U-Net with torch.compile: ..."), or "compile: off".
  std::string headline() const;
  // Every line of the plan, for the log and --dry_run (the request's notes are warnings of their own).
  std::vector<std::string> lines() const;
};

// What a family's registration says of its compiled parts (train/parts/family_registration.h).
struct CompileTargets {
  std::string model;         // the denoiser as sd-scripts' log names it: "U-Net", "DiT model"
  std::string blocks;        // its per-block regions: "input, middle and output blocks"
  std::string fusedKernels;  // the project's own kernels backend=inductor runs for it (kernels/fused_kernels.h), short
  std::string fusedKernelsDetail;  // what they do, for the plan's mechanism line
};

CompilePlan planCompile(const Config& config, const CompileTargets& targets, const CaptureFacts& facts);

// The runner's own plan for a family without the compile panel (SD 1.x/2.x, issue 56): on a CUDA
// device with graphs in the build, the whole training step captured as the panel's reduce-overhead
// with fullgraph would (the family's fused kernels too), unless something in the run keeps the step
// out of a graph, in which case the step runs eagerly and the plan says why; `who` names the family
// for the headline. Elsewhere, or with `enabled` false, compile is off.
CompilePlan planAutomaticCapture(const Config& config, const CompileTargets& targets, const CaptureFacts& facts,
                                 const std::string& who, bool enabled);

}  // namespace sinter::compile

#include "compile/compile_plan.h"

namespace sinter::compile {

namespace {

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

}  // namespace

// Several ranks: where the gradients' all-reduce runs relative to the graphs (PyTorch's CUDA graph
// notes: NCCL >= 2.9.6 can be captured). A whole-step graph holds it, and since a capture's warm-up
// steps all-reduce, every rank captures together before step 1; otherwise the blocks are captured
// and the all-reduce runs right after their graphs replay.
static void planAllReduce(CompilePlan& plan, const CaptureFacts& facts) {
  const std::string ranks = std::to_string(facts.worldSize) + " ranks";
  if (plan.captureSteps && facts.collectivesCapturable) {
    plan.precapture = true;
    plan.mechanisms.push_back(ranks + ": the gradients' all-reduce (" + facts.collectives +
                              ") is inside each captured step; every rank captures its signatures before step 1, together");
    return;
  }
  if (plan.captureSteps) {
    plan.captureSteps = false;
    plan.captureRegions = facts.regionBarriers.empty();
    plan.regions.assign({plan.model + " " + plan.blocks + ", forward and backward, one region each"});
    plan.warnings.push_back(facts.collectives + " cannot be captured in a CUDA graph (NCCL 2.9.6 or newer can): the " + plan.model +
                            "'s " + plan.blocks + " are captured instead and the all-reduce runs after their graphs replay");
    if (!plan.captureRegions) plan.regions.clear();
  }
  if (plan.captureRegions)
    plan.mechanisms.push_back(ranks + ": the gradients are all-reduced (" + facts.collectives +
                              ") outside the blocks' graphs, bucket by bucket as backward completes them");
}

CompilePlan planCompile(const Config& config, const CompileTargets& targets, const CaptureFacts& facts) {
  CompilePlan plan;
  plan.request = resolveCompileRequest(config);
  const CompileRequest& r = plan.request;
  plan.model = targets.model;
  plan.blocks = targets.blocks;
  plan.cacheLimit = r.cacheSizeLimit;
  if (!r.enabled) return plan;

  const bool inductor = r.backend == "inductor";
  const bool autotune = inductor && (r.mode == "max-autotune" || r.mode == "max-autotune-no-cudagraphs");
  const bool graphsAsked = r.capturesGraphs();

  if (r.backend == "eager") plan.mechanisms.push_back("none: the eager backend runs the stock kernels");
  if (r.backend == "aot_eager") {
    plan.checkCapture = true;
    plan.mechanisms.push_back("capture check: the step runs eagerly; what would break its capture is reported");
    // What fullgraph would capture (the whole step), or the blocks.
    for (const auto& b : r.fullgraph ? facts.barriers : facts.regionBarriers) plan.warnings.push_back("would break capture: " + b);
  }
  if (inductor) {
    plan.mechanisms.push_back("attention: fused scaled-dot-product attention (flash, cuDNN or memory-efficient, by shape)");
    if (facts.cudaDevice && !facts.fusedOptimizer.empty()) plan.mechanisms.push_back("optimizer: " + facts.fusedOptimizer);
    if (facts.loraModules)
      plan.mechanisms.push_back(
          "LoRA: the base GEMM adds into the up projection's output in its epilogue, and backward into the down "
          "projection's input gradient (always on)");
    // The family's own kernels (kernels/fused_kernels.h).
    const std::string& kernels = targets.fusedKernels;
    if (!facts.fusedKernelsInBuild) {
      plan.unavailable.push_back("fused kernels (" + kernels + "): this build has no CUDA kernels (a CUDA libtorch and nvcc)");
    } else if (!facts.cudaDevice) {
      plan.unavailable.push_back("fused kernels (" + kernels + "): training on the CPU");
    } else {
      plan.fuseKernels = true;
      plan.mechanisms.push_back("fused kernels: " + targets.fusedKernelsDetail);
    }
  }
  // Autotuning is per shape (with dynamic=True nothing is specialised to shapes); whether it runs
  // depends on the capture, decided below.
  bool autotuneHere = false;
  if (autotune) {
    if (r.dynamic == "true") plan.unavailable.push_back("autotuning: dynamic=True specialises nothing to shapes");
    else if (!facts.cudaDevice) plan.unavailable.push_back("autotuning: training on the CPU");
    else autotuneHere = true;
  }

  // Why nothing is captured in this run, whatever the step holds (nullopt: graphs can run here).
  std::optional<std::string> noGraphs;
  if (!graphsAsked) noGraphs = "this mode captures nothing (reduce-overhead or max-autotune do)";
  else if (r.dynamic == "true") noGraphs = "dynamic=True specialises nothing to shapes, so nothing is captured";
  else if (!facts.graphsInBuild) noGraphs = "this build has no CUDA (a CPU libtorch)";
  else if (!facts.cudaDevice) noGraphs = "training on the CPU";

  if (graphsAsked) {
    const std::string what = "CUDA graphs";
    // fullgraph: the whole step, or nothing and a fatal error; else each block, the rest eager.
    const std::vector<std::string>& barriers = r.fullgraph ? facts.barriers : facts.regionBarriers;
    if (noGraphs) {
      plan.unavailable.push_back(what + ": " + *noGraphs);
    } else if (!barriers.empty()) {
      const std::string why = joined(barriers, "; ");
      if (r.fullgraph)
        plan.fatal = "compile_fullgraph: the training step cannot be captured as one graph: " + why;
      else
        plan.warnings.push_back("the " + plan.model + "'s " + plan.blocks + " are not captured and run eagerly: " + why);
      plan.unavailable.push_back(what + ": " + why);
    } else {
      plan.captureSteps = r.fullgraph;
      plan.captureRegions = !r.fullgraph;
      plan.precapture = r.dynamic == "auto";
      const std::string limit = " (at most " + std::to_string(plan.cacheLimit) + ")";
      if (r.fullgraph) {
        plan.mechanisms.push_back(what + ": forward, backward, gradient clipping, loss scaling, lr schedule and optimizer step "
                                         "replayed as one graph per shape signature" + limit);
        plan.regions.push_back("whole training step");
        if (!facts.textEncodersInStep.empty())
          plan.regions.push_back("text encoders (" + facts.textEncodersInStep +
                                 "), " +
                                 (facts.textEncodersTrainedPart.empty() ? "" : facts.textEncodersTrainedPart + " ") +
                                 "trained: forward and backward inside the whole-step graph, from staged token ids");
      } else {
        plan.mechanisms.push_back(what + ": each of the " + plan.model + "'s " + plan.blocks +
                                  " replays its forward and its backward pass from graphs per input signature" + limit +
                                  "; the rest of the step runs eagerly");
        plan.regions.push_back(plan.model + " " + plan.blocks + ", forward and backward, one region each");
        for (const std::string& excluded : facts.regionExclusions) plan.warnings.push_back(excluded);
      }
      if (facts.worldSize > 1) planAllReduce(plan, facts);
      plan.mechanisms.push_back(plan.precapture ? "warm-up: every planned signature captured before step 1, most frequent first"
                                                : "warm-up: each signature captured when it is first seen");
    }
  }
  // Autotuning only where the step replays graphs. Uncaptured, a step is bound by its launches on the
  // host, and there both tuners made it slower than eager (tests/gpu/RESULTS.md, issue 51): cuDNN's
  // benchmarked convolution algorithms (8-35 ms a step on an H200, one run at a time) and TunableOp's
  // lookup of each GEMM's shape on every call.
  if (autotuneHere) {
    if (plan.captureSteps || plan.captureRegions) {
      plan.cudnnBenchmark = true;
      // Measured on an H100: the candidates include run-time compiled engines, whose PTX the driver
      // compiles on a machine's first such run (tests/gpu/RESULTS.md, "the driver's JIT cache").
      plan.mechanisms.push_back(
          "autotuning: cuDNN benchmarks convolution algorithms during warm-up (a machine's first such run also waits "
          "~10 s for the CUDA driver to compile cuDNN's run-time kernels, which it keeps in its cache)");
      if (facts.gemmTuningInBuild) {
        plan.tuneGemms = true;
        plan.mechanisms.push_back("autotuning: TunableOp times the GEMM algorithms of each shape during warm-up, before capture; "
                                  "results cached on disk for later runs");
      } else {
        plan.unavailable.push_back("GEMM autotuning (TunableOp): this libtorch has no TunableOp (a CUDA PyTorch 2.5 or newer)");
      }
    } else {
      plan.unavailable.push_back("autotuning (cuDNN convolution benchmarks, TunableOp GEMMs): only for captured steps; uncaptured, "
                                 "the step is bound by its launches on the host and runs slower with the tuned algorithms");
    }
  }
  // compile_vae / compile_text_encoders: the caching passes' encoders, captured like the step (by
  // the mode), without gradients, so nothing a method trains keeps them out of a graph.
  auto encoders = [&](bool asked, bool& apply, const std::string& what) {
    if (!asked) return;
    if (noGraphs) {
      plan.unavailable.push_back(what + " capture: " + *noGraphs);
      return;
    }
    apply = true;
    plan.mechanisms.push_back(what + ": CUDA graphs of its caching pass, one per input shape (at most " +
                              std::to_string(plan.cacheLimit) + ")");
    plan.regions.push_back(what + " (caching pass)");
  };
  encoders(r.compileVae, plan.captureVae, "VAE");
  encoders(r.compileTextEncoders, plan.captureTextEncoders, "text encoders");
  return plan;
}

events::CompilePlan CompilePlan::event() const {
  events::CompilePlan e;
  e.enabled = request.enabled;
  e.backend = request.backend;
  e.mode = request.mode;
  e.dynamic = request.dynamic;
  e.fullgraph = request.fullgraph;
  e.cache_size_limit = request.cacheSizeLimit;
  e.mechanisms = mechanisms;
  e.regions = regions;
  e.unavailable = unavailable;
  return e;
}

std::string CompilePlan::headline() const {
  if (!automatic.empty()) return "compile: " + automatic;
  return request.enabled ? request.logLine(model) : "compile: off";
}

CompilePlan planAutomaticCapture(const Config& config, const CompileTargets& targets, const CaptureFacts& facts,
                                 const std::string& who, bool enabled) {
  Config off = config;
  off.set("compile", false);
  if (!enabled || !facts.cudaDevice || !facts.graphsInBuild) return planCompile(off, targets, facts);
  Config captured = config;
  captured.erase("model_family");  // the request's settings are the panel's families': read here as if given
  captured.set("compile", true);
  captured.set("compile_backend", std::string("inductor"));
  captured.set("compile_mode", std::string("reduce-overhead"));
  captured.set("compile_fullgraph", true);
  captured.set("compile_dynamic", std::string("auto"));
  CompilePlan plan = planCompile(captured, targets, facts);
  if (plan.fatal) {
    // Not an error: nothing was asked. The step runs eagerly, and the plan says what kept it out.
    CompilePlan eager = planCompile(off, targets, facts);
    const std::string& fatal = *plan.fatal;
    const size_t cause = fatal.find("one graph: ");
    eager.automatic = who + ": the training step runs eagerly (the runner captures it as CUDA graphs where it can; here " +
                      (cause == std::string::npos ? fatal : fatal.substr(cause + 11)) + ")";
    return eager;
  }
  plan.automatic = who + ": the runner captures the training step as CUDA graphs by its own choice (the compile panel is "
                         "SDXL's and FLUX's; SINTER_SD_CAPTURE=0 runs it eagerly)";
  return plan;
}

std::vector<std::string> CompilePlan::lines() const {
  std::vector<std::string> out{headline()};
  if (request.enabled) out.push_back("cache_size_limit=" + std::to_string(request.cacheSizeLimit));
  for (const auto& m : mechanisms) out.push_back("mechanism: " + m);
  for (const auto& r : regions) out.push_back("region: " + r);
  for (const auto& u : unavailable) out.push_back("unavailable: " + u);
  for (const auto& w : warnings) out.push_back("warning: " + w);
  if (fatal) out.push_back("error: " + *fatal);
  return out;
}

}  // namespace sinter::compile

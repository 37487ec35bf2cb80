#include "train/bench/benchmark_rows.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <optional>

#include "compile/compile_plan.h"
#include "compile/gemm_tuning.h"
#include "train/bench/capture_facts.h"
#include "distributed/torchrun_environment.h"
#include "train/base/device_info.h"
#include "train/bench/step_profiler.h"
#include "train/parts/family_registration.h"
#include "train/capture/step_executor.h"

namespace sinter::train {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

BenchRanks::BenchRanks(const Config& config) {
  communication_ = ddpCommunication(config);
  const auto env = distributed::readTorchrunEnvironment();
  device_ = trainingDevice(env ? env->localRank : 0);
  if (!env) return;
  group_ = distributed::ProcessGroup::connect(*env, device_, distributed::rankTimeout());
  if (group_->rank() != 0) spdlog::set_level(spdlog::level::warn);
}

void BenchRanks::attach(OptimizerUpdate& update, bool overlapWithBackward) {
  if (group_) update.averageGradientsAcross(*group_, communication_, overlapWithBackward);
}

std::string BenchRanks::describe() const {
  if (!group_) return "1 process";
  return std::to_string(group_->size()) + " ranks (data parallel, gradients all-reduced by " + group_->backend() +
         (group_->backend() == "nccl" ? " " + distributed::ncclVersion() : std::string()) +
         (communication_ != distributed::GradientCommunication::Native
              ? ", " + distributed::gradientCommunicationName(communication_) + " on the wire"
              : std::string()) +
         ")";
}

void synchronizeDevice(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

namespace {

BenchRow timeRow(const Config& config, const torch::Device& device, OptimizerUpdate& update, BenchModel& model, const BenchMode& m,
                 const std::vector<StepShape>& shapes, const std::string& shapesLabel, long long steps,
                 const compile::CompilePlan& plan, std::optional<GraphedRegions>& regions, int microBatches) {
  const bool fused = plan.fuseKernels && model.setFusedKernels;
  if (model.setFusedKernels) model.setFusedKernels(plan.fuseKernels);
  if (plan.cudnnBenchmark) at::globalContext().setBenchmarkCuDNN(true);
  if (plan.tuneGemms) spdlog::info("{}", compile::enableGemmTuning(compile::defaultGemmTuningFile()));
  // Per block: the model's blocks replay their own graphs within an eager step.
  if (plan.captureRegions) {
    regions.emplace(device, plan.cacheLimit, std::vector<at::Generator>{model.generator});
    model.captureRegions(&*regions);
  }
  StepExecutorOptions options;
  options.captureSteps = plan.captureSteps;
  if (regions) options.regions = &*regions;
  options.fatalOnCaptureFailure = true;  // the benchmark's step has nothing that prevents capture
  options.cacheLimit = plan.cacheLimit;
  options.lossDivisor = microBatches;
  StepExecutor executor(device, update, options, {model.generator});
  // One optimizer step: its micro-batches, the last with the update.
  auto step = [&](const StepShape& s) {
    for (int i = 1; i < microBatches; ++i) executor.run(s, false, [&] { return model.stagedLoss(s); });
    return executor.run(s, true, [&] { return model.stagedLoss(s); });
  };
  synchronizeDevice(device);
  resetPeakMemory(device);

  BenchRow row;
  row.mode = m.label;
  row.shapes = shapesLabel;
  row.mechanism = plan.captureSteps ? "CUDA graph, whole step" : plan.captureRegions ? "CUDA graphs, per block" : "eager";
  if (fused) row.mechanism += " + fused " + compileTargetsFor(model.family).fusedKernels;
  // First step: warm-up and capture of every shape (as a run's warm-up phase), then one step.
  const auto first = Clock::now();
  for (const StepShape& s : shapes) step(s);
  synchronizeDevice(device);
  row.firstStepS = msSince(first) / 1000.0;
  // profile_steps with output_dir: the first timed steps of each row traced (Kineto), one file per row.
  const long long profileSteps = config.has("profile_steps") ? config.getInt("profile_steps") : 0;
  std::string label = m.label;
  for (char& c : label)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  StepProfiler profiler(config.getString("output_dir").empty() ? 0 : profileSteps, steps + 1,
                        config.getString("output_dir") + "/benchmark-" + label + ".json", device);
  std::vector<double> ms;
  for (long long i = 0; i < steps; ++i) {
    const StepShape& s = shapes[static_cast<size_t>(i) % shapes.size()];
    profiler.stepStarts(i + 2);
    const auto start = Clock::now();
    step(s);
    synchronizeDevice(device);
    ms.push_back(msSince(start));
    if (auto trace = profiler.stepEnded(i + 2)) spdlog::info("trace of {}: {}", m.label, *trace);
  }
  if (auto trace = profiler.finish()) spdlog::info("trace of {}: {}", m.label, *trace);
  row.medianMs = median(ms);
  // Pipelined: the host queues the next step while the GPU runs this one, as the training loop does.
  const auto pipelined = Clock::now();
  torch::Tensor loss;
  for (long long i = 0; i < steps; ++i) {
    const StepShape& s = shapes[static_cast<size_t>(i) % shapes.size()];
    loss = step(s).loss;
  }
  synchronizeDevice(device);
  row.pipelinedMs = msSince(pipelined) / static_cast<double>(steps);
  row.peakMiB = peakMemoryMb(device);
  row.replayedShare = replayedShare(executor, regions ? &*regions : nullptr);
  spdlog::info("{} ({}): median {:.1f} ms, loss {:.4f}", row.mode, row.shapes, row.medianMs, loss.item<double>());
  return row;
}

}  // namespace

BenchRow runBenchRow(const Config& config, const torch::Device& device, OptimizerUpdate& update, BenchModel& model,
                     const BenchMode& m, const std::vector<StepShape>& shapes, const std::string& shapesLabel, long long steps,
                     int microBatches) {
  Config rowConfig = config;
  rowConfig.set("compile", m.compile);
  rowConfig.set("compile_backend", m.backend);
  rowConfig.set("compile_mode", m.mode);
  rowConfig.set("compile_fullgraph", m.fullgraph);
  rowConfig.set("network_train_unet_only", true);  // the benchmark's step trains the denoiser's LoRA alone
  // The run's own facts: with gradient_checkpointing the blocks are not captured, as in a run.
  const compile::CompilePlan plan = compile::planCompile(rowConfig, compileTargetsFor(model.family), captureFacts(rowConfig, device));
  if (plan.fatal) {
    spdlog::warn("{}: not run: {}", m.label, *plan.fatal);
    BenchRow refused;
    refused.mode = m.label;
    refused.shapes = shapesLabel;
    refused.refused = *plan.fatal;
    return refused;
  }
  std::optional<GraphedRegions> regions;  // the row's per-block graphs, if it has them
  BenchRow row;
  try {
    row = timeRow(rowConfig, device, update, model, m, shapes, shapesLabel, steps, plan, regions, microBatches);
  } catch (const std::exception& e) {
    // The other rows still run; the table says which failed and why.
    spdlog::error("{}: failed: {}", m.label, e.what());
    row.mode = m.label;
    row.shapes = shapesLabel;
    row.failed = e.what();
  }
  // Whichever way the row ended, the next one starts from the model's and the process's defaults.
  if (regions) {
    for (const std::string& failure : regions->takeFailures()) spdlog::warn("{}", failure);
    model.captureRegions(nullptr);
  }
  if (plan.cudnnBenchmark) at::globalContext().setBenchmarkCuDNN(config.getBool("cuda_cudnn_benchmark"));
  if (plan.tuneGemms) compile::disableGemmTuning();
  return row;
}

void printBenchRows(const std::vector<BenchRow>& rows) {
  std::printf("| mode | shapes | mechanism | first step (warm-up + capture) | median step (synced) | step, pipelined | "
              "vs eager | peak memory | replayed |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const BenchRow& r : rows) {
    if (!r.refused.empty() || !r.failed.empty()) {
      std::printf("| %s | %s | %s: %s | | | | | | |\n", r.mode.c_str(), r.shapes.c_str(), r.refused.empty() ? "failed" : "refused",
                  (r.refused.empty() ? r.failed : r.refused).c_str());
      continue;
    }
    const BenchRow& eager = *std::find_if(rows.begin(), rows.end(), [&](const BenchRow& e) { return e.shapes == r.shapes; });
    std::printf("| %s | %s | %s | %.2f s | %.1f ms | %.1f ms | %.2fx | %.0f MiB | %.0f%% |\n", r.mode.c_str(), r.shapes.c_str(),
                r.mechanism.c_str(), r.firstStepS, r.medianMs, r.pipelinedMs, eager.medianMs / r.medianMs, r.peakMiB,
                100.0 * r.replayedShare);
  }
}


}  // namespace sinter::train

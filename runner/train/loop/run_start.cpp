#include "train/loop/run_start.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "train/base/run_errors.h"
#include "train/base/train_state.h"
#include "train/loop/rank_noise_states.h"
#include "train/loop/resume_settings.h"

namespace sinter::train {

namespace fs = std::filesystem;

namespace {

// The resumed state's method tensors, optimizer and noise; its step and data position returned.
RunStart resume(const RunContext& run, const LoopOptions& options, const RunSchedule& planned, const EpochLayout& layout,
                FamilyPart& family, MethodPart& method, Optimizer& optimizer) {
  TrainState state = loadTrainState(options.resume);
  // Every field checked against this run before any of it is used (resume_position.h, optimizer.h).
  const std::string stateFile = (fs::path(options.resume) / "train_state.json").string();
  checkResumeProgress(state.progress, layout, planned.length.maxTrainSteps, options.initialStep || options.initialEpoch, stateFile);
  refuseUncarriedSettings(state.progress, run.config, stateFile);
  method.loadStateTensors(state.network, (fs::path(options.resume) / "network.safetensors").string());
  try {
    optimizer.loadStateTensors(std::map<std::string, torch::Tensor>(state.optimizer.begin(), state.optimizer.end()));
    // The lr schedule reads the optimizer's completed steps.
    const double steps = optimizer.stepCount().item<double>();
    if (!(steps >= 0 && steps <= 9007199254740992.0 && steps == std::floor(steps)))
      throw InputError("step is " + std::to_string(steps) + "; an optimizer's completed steps are a whole number from 0");
  } catch (const std::exception& e) {
    throw InputError("resume: " + (fs::path(options.resume) / "optimizer.safetensors").string() + ": " + userMessage(e));
  }
  // Each rank's noise continues from its own state (saved by rank 0 for all of them).
  const std::string rngFile = (fs::path(options.resume) / "rng.safetensors").string();
  std::optional<torch::Tensor> noiseState =
      run.rank() == 0 ? std::optional<torch::Tensor>(requireTensor(state.rng, "device", options.resume)) : savedNoiseState(state.rng, run.rank());
  if (noiseState) restoreNoiseState(family.generator(), *noiseState, rngFile, run.rank());
  else spdlog::warn("resume: {} holds no noise state for rank {} (saved with fewer ranks); its noise starts from seed {}", options.resume,
                    run.rank(), run.noiseSeed());
  RunStart start;
  start.globalStep = state.progress.at("global_step").get<long long>();
  // Saved by another number of ranks or with another batch size, the position is carried over as
  // the share of the epoch already trained (resume_position.h).
  ResumedDataPosition resumed = resumeDataPosition(state.progress.at("data"), layout, options.resume);
  start.position = resumed.position;
  start.ema = std::move(state.ema);
  for (const std::string& warning : resumed.warnings) {
    spdlog::warn("{}", warning);
    run.events.emit(events::Warning{warning});
  }
  if (start.position.seed != run.seed) spdlog::warn("resume: the data order continues with the saved seed {}", start.position.seed);
  spdlog::info("resumed from {} at step {} (epoch {}) of {}", options.resume, start.globalStep, start.position.epoch + 1,
               planned.length.maxTrainSteps);
  // Continued with changed settings: what this run does otherwise than the state's (resume_settings.h).
  const std::vector<std::string> changed = describeSettingChanges(state.progress, run.config);
  if (!changed.empty()) {
    spdlog::info("resume: {} setting{} changed since the state was saved; the step and epoch counts go on from it:", changed.size(),
                 changed.size() == 1 ? "" : "s");
    for (const std::string& line : changed) spdlog::info("  {}", line);
  }
  return start;
}

}  // namespace

RunStart startRun(const RunContext& run, const LoopOptions& options, const RunSchedule& planned, const EpochLayout& layout,
                  long long batchesPerEpoch, FamilyPart& family, MethodPart& method, Optimizer& optimizer) {
  RunStart start;
  start.position = data::DataOrderState{run.seed, 0, 0};
  if (!options.resume.empty()) start = resume(run, options, planned, layout, family, method, optimizer);
  start.scheduleStep = static_cast<long long>(optimizer.stepCount().item<double>());
  // initial_step / initial_epoch (train_network.py): the step and epoch counters start there, in
  // place of a resumed state's step; the lr schedule keeps its own count. The data goes on from that
  // step's batch with skip_until_initial_step, else from the start of its epoch.
  if (options.initialStep || options.initialEpoch) {
    const std::string key = options.initialStep ? "initial_step" : "initial_epoch";
    if (!options.resume.empty())
      spdlog::warn("resume: the step saved in {} ({}) is ignored because {} is set (as sd-scripts does); the optimizer and the lr "
                   "schedule continue from the state", options.resume, start.globalStep, key);
    start.globalStep = planned.initialStep;
    const int gradAccum = options.gradientAccumulationSteps;
    start.position = options.skipUntilInitialStep
                         ? data::positionForStep(start.position.seed, start.globalStep, batchesPerEpoch, gradAccum)
                         : data::DataOrderState{start.position.seed, start.globalStep / std::max(1LL, planned.length.stepsPerEpoch), 0};
    spdlog::info("{}: training starts at step {} of {} (epoch {}), the data {}; the lr schedule {}", key, start.globalStep,
                 planned.length.maxTrainSteps, start.position.epoch + 1,
                 options.skipUntilInitialStep ? "from that step's batch (skip_until_initial_step)" : "from the start of that epoch",
                 options.resume.empty() ? "starts from its beginning (initial_step does not move it; a resumed state does)"
                                        : "continues from the state at its step " + std::to_string(start.scheduleStep));
  }
  return start;
}

}  // namespace sinter::train

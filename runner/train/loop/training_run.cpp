#include "train/loop/training_run.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>
#include <random>

#include "compile/compile_plan.h"
#include "core/exit_codes.h"
#include "core/toml_config.h"
#include "distributed/process_group.h"
#include "distributed/rank_agreement.h"
#include "distributed/torchrun_environment.h"
#include "train/base/device_info.h"
#include "train/base/vram_budget.h"
#include "train/base/mixed_precision.h"
#include "train/base/run_errors.h"
#include "data/validation_split.h"
#include "train/loop/control_channel.h"
#include "train/loop/run_preflight.h"
#include "train/loop/stop_request.h"
#include "train/loop/training_loop.h"
#include "train/loop/training_table.h"
#include "train/parts/family_registration.h"
#include "train/loop/output_lock.h"
#include "train/loop/run_folders.h"

namespace sinter::train {

namespace {

// Takes the lock of the run's output (output_lock.h) into `lock`: "" when taken, else why the run
// is refused. A lock file that a dead run left is taken over with a warning.
std::string takeOutputLock(const Config& config, std::optional<OutputLock>& lock, EventSink& events) {
  const std::string dir = config.getString("output_dir"), name = runOutputName(config);
  try {
    lock.emplace(outputLockPath(dir, name));
  } catch (const OutputLockHeld& e) {
    return "another run is writing output_name '" + name + "' into output_dir '" + dir + "': " + e.what() +
           "; wait for it to end, or choose another output_dir or output_name";
  } catch (const std::exception& e) {
    return std::string("output_dir: ") + e.what();
  }
  if (const std::optional<std::string>& previous = lock->takenOverFrom()) {
    const std::string message = "'" + lock->path() + "' was left by pid " + *previous +
                                ", a run that ended without removing it (nothing holds it now); this run takes it over";
    spdlog::warn("{}", message);
    events.emit(events::Warning{message});
  }
  return "";
}

int fail(EventSink& events, int code, const std::string& message) {
  spdlog::error("{}", message);
  events.emit(events::Error{message});
  events.emit(events::Done{"failed", 0, 0});
  return code;
}

// What the compile settings turn on (the preflight's plan), said once in the log and once as an event.
void reportCompilePlan(const compile::CompilePlan& plan, EventSink& events) {
  auto warn = [&](const std::string& message) {
    spdlog::warn("{}", message);
    events.emit(events::Warning{message});
  };
  for (const auto& note : plan.request.notes) warn(note);
  for (const auto& line : plan.lines()) spdlog::info("{}", line);
  for (const auto& w : plan.warnings) warn(w);
  events.emit(plan.event());
}

// Options the config accepts (sd-scripts has them) that this build does not act on yet: say so
// rather than ignore them silently.
void reportUnsupportedOptions(const Config& config, EventSink& events) {
  auto warn = [&](const std::string& message) {
    spdlog::warn("{}", message);
    events.emit(events::Warning{message});
  };
  if (config.getBool("fp8_base") || config.getBool("fp8_base_unet")) {
    const std::optional<Family> resolved = config.family();  // the preflight resolved it to a registered family
    const FamilyRegistration* family = resolved ? findRegisteredFamily(*resolved) : nullptr;
    if (family && !family->fp8Base) {
      std::string fp8Families;
      for (const FamilyRegistration& r : registeredFamilies())
        if (r.fp8Base) fp8Families += std::string(fp8Families.empty() ? "" : ", ") + toString(r.family);
      warn(std::string(config.getBool("fp8_base") ? "fp8_base" : "fp8_base_unet") + " is in this build for " + fp8Families + " only; the " + toString(family->family) +
           " base model stays in the training precision");
    }
  }
  if (config.getBool("split_attn")) warn("split_attn is not in this build yet; attention runs over the whole batch");
}

}  // namespace

int runTraining(RunPreflight preflight, EventSink& events, bool controlFromStdin) {
  const auto setupStart = std::chrono::steady_clock::now();
  const Config& config = preflight.resolved;
  reportUnsupportedOptions(config, events);

  // Anything that goes wrong before the first step is bad input (exit 2); after it, a failed run (1).
  bool trainingStarted = false;
  std::optional<distributed::TorchrunEnvironment> ranks;
  try {
    ranks = distributed::readTorchrunEnvironment();
  } catch (const std::invalid_argument& e) {
    return fail(events, kExitBadInput, e.what());
  }
  if (ranks && ranks->rank != 0) {
    // Rank 0 reports the run: the others' events go nowhere and their log holds warnings and errors
    // (each line naming the rank: runner_cli.cpp).
    events.mute();
    spdlog::set_level(spdlog::level::warn);
  }
  try {
    // A stop that came before the run made anything (its handler is installed first: runner_cli.cpp).
    if (stopRequested()) {
      spdlog::info("stopped before the run started as requested; nothing was made");
      events.emit(events::Done{"stopped", 0, 0.0});
      return kExitOk;
    }
    const torch::Device device = trainingDevice(ranks ? ranks->localRank : 0);
    // SINTER_CUDA_MEMORY_CAP_GB: a smaller card emulated (the vram budget benchmarks).
    if (const std::string capped = applyMemoryCapFromEnvironment(device); !capped.empty()) spdlog::info("{}", capped);
    // Several ranks: they meet, and check that they train with one config, before anything loads.
    std::unique_ptr<distributed::ProcessGroup> group;
    if (ranks) {
      group = distributed::ProcessGroup::connect(*ranks, device, distributed::rankTimeout());
      distributed::requireSameConfig(*group, writeConfigToml(config));
      spdlog::info("data parallel: rank {} of {} on {}, gradients all-reduced by {}", group->rank(), group->size(), describeDevice(device),
                   group->backend());
    }
    compile::CompilePlan compilePlan = preflight.compilePlan.value();
    reportCompilePlan(compilePlan, events);
    const std::uint64_t seed =
        isUnset(config.get("seed")) ? std::random_device{}() : static_cast<std::uint64_t>(config.getInt("seed"));
    torch::manual_seed(seed);
    spdlog::info("device: {}, seed: {}", describeDevice(device), seed);
    // The preflight could hold out validation images with the config's seed only; a drawn one picks them now.
    if (isUnset(config.get("seed"))) data::markValidationImages(*preflight.dataset, seed);
    if (std::string flags = applyCudaMathFlags(device, config.getBool("cuda_allow_tf32"),
                                               config.getBool("cuda_cudnn_benchmark") || compilePlan.cudnnBenchmark);
        !flags.empty())
      spdlog::info("{}", flags);
    PrecisionPlan precision =
        planPrecision(parseMixedPrecision(config.getString("mixed_precision")), config.getBool("full_fp16"), config.getBool("full_bf16"),
                      trainsFullWeights(config.tab()));
    precision.noHalfVae = config.getBool("no_half_vae");
    for (const std::string& key : foldersTheRunCreates())
      if (const std::string dir = config.getString(key); !dir.empty()) createRunFolder(key, dir);
    // Rank 0 writes the run's files, so it alone takes their lock; every rank refuses with its answer.
    std::optional<OutputLock> outputLock;
    std::string lockRefusal = !group || group->rank() == 0 ? takeOutputLock(config, outputLock, events) : "";
    if (group) lockRefusal = distributed::rankZeroVerdict(*group, "output-lock", lockRefusal);
    if (!lockRefusal.empty()) throw InputError(lockRefusal);
    // An exit straight from a signal handler (stop_request.h) removes the lock's file too.
    struct LockFileOnImmediateExit {
      explicit LockFileOnImmediateExit(const std::optional<OutputLock>& lock) {
        if (lock) removeOnImmediateExit(lock->path().c_str());
      }
      ~LockFileOnImmediateExit() { removeOnImmediateExit(nullptr); }
    } lockFileOnImmediateExit(outputLock);

    const RunContext run{config, device, precision, seed, events, setupStart, std::move(compilePlan), group.get()};
    // The set-up's parts, timed in the log: a user (and the GPU matrix) sees where the wait before step 1 goes.
    const auto secondsSince = [](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    auto phaseStart = std::chrono::steady_clock::now();
    TrainingParts parts = makeTrainingParts(run, *config.family(), config.tab());
    // The network's initial weights are the seed's first draws (as sd-scripts' set_seed before
    // create_network), whatever loading the models drew.
    torch::manual_seed(seed);
    parts.method->attach(*parts.family);
    spdlog::info("models loaded and the network attached in {:.1f} s", secondsSince(phaseStart));
    phaseStart = std::chrono::steady_clock::now();
    // Rank 0 caches first (what it writes to disk the others then read), the others after it.
    if (group && group->rank() != 0) group->barrier();
    parts.family->buildCaches(*preflight.dataset, std::max(1, static_cast<int>(config.getInt("max_data_loader_n_workers"))));
    if (group && group->rank() == 0) group->barrier();
    spdlog::info("caches built and the models placed for training in {:.1f} s", secondsSince(phaseStart));
    // Rank 0 reads the commands; what came while the run was set up waits in the pipe.
    std::optional<ControlChannel> control;
    if (controlFromStdin && run.rank() == 0) control.emplace(0);
    return runTrainingLoop(run, *parts.family, *parts.method, *preflight.dataset, control ? &*control : nullptr, trainingStarted);
  } catch (const std::exception& e) {
    return trainingStarted ? fail(events, kExitTrainingFailed, "training failed: " + userMessage(e))
                           : fail(events, kExitBadInput, userMessage(e));
  }
}

}  // namespace sinter::train

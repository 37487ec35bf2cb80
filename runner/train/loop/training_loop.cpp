#include "train/loop/training_loop.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>
#include <filesystem>

#include "data/batch_loader.h"
#include "data/batch_plan.h"
#include "distributed/rank_agreement.h"
#include "train/bench/step_profiler.h"
#include "train/loop/best_validation.h"
#include "train/loop/device_batches.h"
#include "train/loop/progress_meter.h"
#include "train/loop/resume_position.h"
#include "train/loop/run_controls.h"
#include "train/loop/run_ema.h"
#include "train/loop/run_saves.h"
#include "train/loop/run_start.h"
#include "train/loop/run_summary.h"
#include "train/loop/sample_images.h"
#include "train/loop/step_reports.h"
#include "train/loop/step_runner.h"
#include "train/loop/tracker_settings.h"
#include "train/loop/training_log.h"
#include "train/loop/validation_pass.h"
#include "train/loop/warmup_clock.h"
#include "train/optim/fused_backward.h"
#include "train/optim/lr_schedule_config.h"
#include "train/optim/optimizer_args.h"
#include "train/optim/optimizer_choice.h"
#include "train/base/config_values.h"

namespace sinter::train {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

struct ValidationResult {
  double loss = 0, seconds = 0;
};

// A validation pass after `step`: its event and log line (sd-scripts' loss/validation/*_average).
ValidationResult validationPass(ValidationPass& validation, bool textEncodersTrain, long long step, long long epoch, const char* kind,
                      const StepReports& reports, const ProgressMeter& meter, TrainingLog& log, EventSink& events) {
  const auto start = Clock::now();
  const double loss = validation.run(textEncodersTrain);
  const double s = seconds(start);
  if (!std::isfinite(loss)) throw std::runtime_error("the validation loss is " + std::to_string(loss) + " at step " + std::to_string(step));
  reports.endLine();
  spdlog::info("validation loss ({}) at step {}, epoch {}: {:.6f} ({:.1f} s)", kind, step, epoch, loss, s);
  events.emit(events::Validation{step, epoch, loss, kind});
  const bool epochEnd = std::string(kind) == "epoch";
  if (log.active()) log.validation(epochEnd, epochEnd ? epoch : step, loss, meter.averageLoss());
  return {loss, s};
}

// The data loader's workers, length and caption tokenizer (captions become token ids in its workers).
data::LoaderOptions loaderOptionsFor(const LoopOptions& options, const data::TrainingLength& length, FamilyPart& family) {
  data::LoaderOptions o;
  o.workers = options.workers;
  o.maxTrainSteps = length.maxTrainSteps;
  o.gradientAccumulationSteps = options.gradientAccumulationSteps;
  o.tokenize = family.captionTokenizer();
  return o;
}

// profile_steps: a failure to start the profiler is a warning, not the run's end.
void startProfiledStep(StepProfiler& profiler, long long step, EventSink& events) {
  try {
    profiler.stepStarts(step);
  } catch (const std::exception& e) {
    spdlog::warn("{}", e.what());
    events.emit(events::Warning{e.what()});
  }
}

void profileWritten(const std::optional<std::string>& path, long long steps, EventSink& events) {
  if (!path) return;
  spdlog::info("profile of {} steps written to {} (open it in Perfetto or chrome://tracing)", steps, *path);
  events.emit(events::Saved{*path, "profile"});
}

}  // namespace

LoopOptions LoopOptions::fromConfig(const Config& config, const PrecisionPlan& precision) {
  LoopOptions o;
  o.outputDir = config.getString("output_dir");
  o.outputName = runOutputName(config);
  o.gradientAccumulationSteps = static_cast<int>(config.getInt("gradient_accumulation_steps"));
  if (!isUnset(config.get("max_train_epochs"))) o.maxTrainEpochs = config.getInt("max_train_epochs");
  o.maxTrainSteps = config.getInt("max_train_steps");
  o.workers = static_cast<int>(config.getInt("max_data_loader_n_workers"));
  o.optimizer = optimizerSettingsFromConfig(config);
  o.lr = lrScheduleOptionsFromConfig(config, o.optimizer, &o.lrSchedulerReplaced);
  o.fusedBackwardPass = fusedBackwardPassRequested(config);
  if (o.fusedBackwardPass) checkFusedBackwardPass(o.optimizer, o.gradientAccumulationSteps, fusedBackwardOption(config));
  o.lrWarmupSteps = config.getDouble("lr_warmup_steps");
  o.lrDecaySteps = config.getDouble("lr_decay_steps");
  o.maxGradNorm = config.getDouble("max_grad_norm");
  o.lossScaling = precision.lossScaling;
  o.resume = config.getString("resume");
  o.initialStep = optionalInt(config, "initial_step");
  o.initialEpoch = optionalInt(config, "initial_epoch");
  o.skipUntilInitialStep = config.getBool("skip_until_initial_step");
  o.saves = SaveSchedule::fromConfig(config);
  o.profileSteps = optionalInt(config, "profile_steps").value_or(0);
  return o;
}

RunSchedule planSchedule(const LoopOptions& options, long long batchesPerEpoch) {
  RunSchedule s;
  s.length = data::computeTrainingLength(batchesPerEpoch, options.maxTrainEpochs, options.maxTrainSteps,
                                         options.gradientAccumulationSteps);
  s.lr = options.lr;
  s.lr.totalSteps = s.length.maxTrainSteps;
  s.lr.warmupSteps = resolveWarmupSteps(options.lrWarmupSteps, s.length.maxTrainSteps);
  s.lr.decaySteps = resolveWarmupSteps(options.lrDecaySteps, s.length.maxTrainSteps, "lr_decay_steps");
  s.initialStep = options.initialStep.value_or(options.initialEpoch ? (*options.initialEpoch - 1) * s.length.stepsPerEpoch : 0);
  return s;
}

void checkInitialStep(const LoopOptions& options, const RunSchedule& schedule) {
  if (schedule.initialStep < 0) throw std::invalid_argument("initial_step must not be negative");
  // train_network.py: "max_train_steps should be greater than initial step".
  if (schedule.initialStep > 0 && schedule.length.maxTrainSteps <= schedule.initialStep)
    throw std::invalid_argument("max_train_steps (" + std::to_string(schedule.length.maxTrainSteps) + ") must be greater than " +
                                (options.initialStep ? "initial_step" : "the step initial_epoch starts at") + " (" +
                                std::to_string(schedule.initialStep) + ")");
}

int runTrainingLoop(const RunContext& run, FamilyPart& family, MethodPart& method, const data::Dataset& dataset,
                    ControlChannel* controlChannel, bool& trainingStarted) {
  // Set-up: the options, the data's plan (several ranks: each trains on its shard of every epoch,
  // only rank 0 writes files and events), the run's length, and what runs a step.
  const LoopOptions options = LoopOptions::fromConfig(run.config, run.precision);
  EventSink& events = run.events;
  const bool writes = run.rank() == 0;
  const data::BatchShard shard{run.rank(), run.worldSize()};
  const data::BatchPlan plan(dataset, run.seed, shard);
  const RunSchedule planned = planSchedule(options, plan.batchesPerEpoch());
  const data::TrainingLength& length = planned.length;
  checkInitialStep(options, planned);
  method.describeRun(dataset, plan.batchesPerEpoch(), length.numEpochs, length.maxTrainSteps, options.gradientAccumulationSteps);
  StepRunner steps(run, family, method, options, planned);
  Optimizer& optimizer = steps.optimizer();

  // Resume (or initial_step): where the counters and the data start. How this run cuts its epochs
  // is saved with every state and compared on resume.
  const long long batchSize = dataset.datasets.empty() ? 1 : dataset.datasets.front().batchSize;
  const EpochLayout epochLayout{run.worldSize(), batchSize, plan.allBatchesPerEpoch()};
  RunStart start = startRun(run, options, planned, epochLayout, plan.batchesPerEpoch(), family, method, optimizer);
  long long globalStep = start.globalStep, scheduleStep = start.scheduleStep;
  const long long startStep = globalStep;
  // ema_decay: the EMA of the trained weights, from the weights as they start (or the resumed state's).
  RunEma ema(run, family, method, optimizer, std::move(start.ema), options.resume);  // not kept beside the EMA it fills
  const data::LoaderOptions loaderOptions = loaderOptionsFor(options, length, family);
  DeviceBatches batches(dataset, shard, loaderOptions, family, run.device, start.position);
  // validation_split: the held-out images' loss, on rank 0 (the others wait at the next step's all-reduce).
  std::optional<ValidationPass> validation;
  if (dataset.numValidationImages > 0 && writes) validation.emplace(run, family, dataset, loaderOptions);
  announceRun(run, family, dataset, plan, length, batchSize, options.gradientAccumulationSteps);
  RunSaves saves(run, family, method, optimizer, options, epochLayout, [&] { return batches.position(); }, &ema);
  TrainingLog log(TrackerSettings::fromConfig(run.config), run.config, writes, events, std::time(nullptr));
  // save_best_k and early_stop_patience: what the validation passes' losses decide.
  BestValidation best(run, saves, options.outputName, dataset.numValidationImages);

  // Training: the warm-up, samples before it, then the steps.
  trainingStarted = true;
  if (steps.stopAfter(0)) {
    spdlog::info("stopped before the first step as requested; nothing was trained");
    if (run.group) run.group->barrier();  // rank 0's store serves the others' answer before it leaves
    events.emit(events::Done{"stopped", globalStep, 0.0});
    return 0;
  }
  const bool textEncodersTrain = method.trainsTextEncoders();
  family.setTraining(textEncodersTrain);
  WarmupClock warmup(events);
  steps.warmUp(textEncodersTrain, plan, warmup);
  // Without graphs captured ahead, the first step allocates buffers and picks kernels: it is the warm-up.
  const bool firstStepIsWarmup = options.resume.empty() && !steps.captures();
  // Sample images and validation passes are kept out of the steps' time (and so out of it/s and
  // ETA) and the total; with several ranks rank 0 alone runs them.
  SampleImages samples(run, family, &ema, method.samplePromptReplacements());
  // Under mixed precision the models read compute copies of the trained weights, which training
  // refreshes before each forward pass: samples and validation after a step follow the step's weights.
  auto sampleNow = [&](long long step, std::optional<long long> epoch) {
    method.trainedWeightsChanged();
    return samples.make(step, epoch, textEncodersTrain);
  };
  const double firstSampleSeconds = writes && samples.schedule().beforeTraining() ? sampleNow(globalStep, std::nullopt) : 0;
  double sampleSeconds = 0, validationSeconds = 0;
  if (validation && validation->enabled())
    spdlog::info("validation: {} batches x {} timesteps per pass", validation->batches(), validation->timesteps());
  ProgressMeter meter(length.maxTrainSteps, std::max(1LL, length.stepsPerEpoch));
  StepReports reports(run, optimizer, steps.schedule(), log, meter, method.stepFigureNames(), length.maxTrainSteps, startStep,
                      firstStepIsWarmup);
  auto validate = [&](long long step, long long epoch, const char* kind) {
    method.trainedWeightsChanged();  // the step's weights, as samples (sampleNow)
    const ValidationResult pass = validationPass(*validation, textEncodersTrain, step, epoch, kind, reports, meter, log, events);
    validationSeconds += pass.seconds;
    best.passed(step, epoch, pass.loss);
  };
  // The control channel's commands (--control stdin) and a stop signal, as rank 0 decides for all.
  RunControls controls(run, controlChannel);
  double pausedSeconds = 0;
  StepProfiler profiler(writes ? options.profileSteps : 0, length.maxTrainSteps,
                        (fs::path(options.outputDir) / (options.outputName + "-profile.json")).string(), run.device);
  const auto trainStart = Clock::now();
  // A step's time is the interval between the same point of consecutive iterations (the GPU works
  // a step ahead of the host), less the time spent saving.
  auto lastMark = trainStart;
  double savingSeconds = 0;
  // The last step's epoch (1-based) and whether that step finished it: sd-scripts' last sample_images call.
  long long lastEpoch = 0;
  bool lastEpochFinished = true, stopped = false, endedAfterEpoch = false, earlyStopped = false;
  const ControlActions controlActions{samples.hasPrompts(),
                                      [&] { return writes ? sampleNow(globalStep, std::nullopt) : 0.0; },
                                      [&] { saves.requested(globalStep, lastEpoch); }, [&] { reports.endLine(); }};
  while (globalStep < length.maxTrainSteps) {
    startProfiledStep(profiler, globalStep + 1, events);
    StepFacts facts;
    facts.lr = optimizer.ownLearningRate(scheduleStep + 1).value_or(steps.schedule().learningRate(optimizer.group(0).lr, scheduleStep));
    const StepResult step = steps.step([&] { return batches.next(); }, plan.batchesPerEpoch(), warmup);
    ++globalStep;
    ++scheduleStep;
    ema.afterStep(globalStep);  // queued after the step's work (a replayed graph's too)
    const auto mark = Clock::now();
    facts.epoch = step.epoch, facts.signature = step.signature;
    facts.seconds = std::chrono::duration<double>(mark - lastMark).count() - savingSeconds - step.captureSeconds;
    lastMark = mark;
    reports.push(globalStep, scheduleStep, step.loss, method.stepFigures(), facts);

    // After the step: what the control channel and a stop signal ask (run_controls.h), what the
    // schedules ask (a save, samples, validation, the epoch's end), then the commands' own work and
    // the run's end.
    const long long epoch = step.epoch + 1;
    lastEpoch = epoch;
    lastEpochFinished = step.epochEnds;
    const StepBoundary boundary{globalStep, epoch, step.epochEnds, globalStep == length.maxTrainSteps};
    const BoundaryControls asked = controls.afterStep(boundary);
    const bool stopNow = asked.stop && !boundary.lastStep;
    const bool endNow = asked.endsRun && !stopNow;  // stop_after_epoch: this epoch's end is the run's
    const bool saveStep = options.saves.saveAfterStep(globalStep, length.maxTrainSteps);
    const bool saveEpoch = step.epochEnds && options.saves.saveAfterEpoch(epoch, length.numEpochs) && !boundary.lastStep && !endNow;
    const bool samplesScheduled = samples.schedule().afterStep(globalStep) || (step.epochEnds && samples.schedule().afterEpoch(epoch));
    const bool sampleStep = writes && samples.schedule().afterStep(globalStep);
    const bool validateStep = validation && validation->afterStep(globalStep);
    // The last step ends its epoch for validation too (sd-scripts validates after the loop's break).
    const bool validateEpoch = validation && (step.epochEnds || globalStep == length.maxTrainSteps) && validation->afterEpoch(epoch);
    // A save, a sample, a validation, an epoch's end, a stop or a command waits for the step anyway: report it
    // now (its step event comes before what they report).
    reports.report(saveStep || sampleStep || validateStep || validateEpoch || step.epochEnds || stopNow || boundary.lastStep ||
                       asked.any(),
                   warmup);
    const auto savingStart = Clock::now();
    profileWritten(profiler.stepEnded(globalStep), options.profileSteps, events);
    if (sampleStep) sampleSeconds += sampleNow(globalStep, std::nullopt);
    if (saveStep) saves.afterStep(globalStep, epoch);
    if (validateStep) validate(globalStep, epoch, "step");
    if (validateEpoch) validate(globalStep, epoch, "epoch");
    // early_stop_patience ends the run here as a completed run ends (as stop_after_epoch does).
    const bool earlyStopNow = best.endsRunAfter(boundary, stopNow || endNow || boundary.lastStep);
    if (step.epochEnds) {
      events.emit(events::Epoch{epoch, length.numEpochs, globalStep, meter.averageLoss()});
      log.epochEnd(epoch, meter.averageLoss());
      log.flush();
      reports.endLine();
      spdlog::info("epoch {}/{} done", epoch, length.numEpochs);
      if (saveEpoch && !earlyStopNow) saves.afterEpoch(epoch, globalStep);
      if (writes && samples.schedule().afterEpoch(epoch)) sampleSeconds += sampleNow(globalStep, epoch);
    }
    const bool runEnds = stopNow || endNow || earlyStopNow || boundary.lastStep;
    const ControlOutcome controlled =
        controls.act(asked, boundary, {samplesScheduled, saveStep || saveEpoch || runEnds, runEnds}, controlActions);
    sampleSeconds += controlled.sampleSeconds;
    pausedSeconds += controlled.pausedSeconds;
    if (stopNow || controlled.stop) {
      reports.endLine();
      spdlog::info("stopping at step {} as requested", globalStep);
      saves.atStop(globalStep, epoch);
      stopped = true;
      break;
    }
    if (endNow) {
      reports.endLine();
      spdlog::info("the run ends after epoch {} (step {}) as asked", epoch, globalStep);
      endedAfterEpoch = true;
      break;
    }
    if (earlyStopNow) {
      reports.endLine();
      spdlog::info("early stop at step {}: {}", globalStep, best.stopMessage());
      earlyStopped = true;
      break;
    }
    savingSeconds = seconds(savingStart);
  }
  controls.finish(globalStep, lastEpoch, stopped);

  // The summary: the last reports, the final save and samples, the Done event.
  reports.report(true, warmup);
  log.close();
  profileWritten(profiler.finish(), options.profileSteps, events);
  if (run.group) {
    distributed::requireIdenticalWeights(*run.group, optimizer.parameters());
    spdlog::info("the trained weights are identical on all {} ranks", run.group->size());
  }
  reports.endLine();
  steps.logHowStepsRan();
  if (!stopped) {
    saves.atEnd(globalStep, endedAfterEpoch || earlyStopped ? lastEpoch : length.numEpochs);
    if (writes && samples.schedule().atRunEnd(lastEpoch, lastEpochFinished))
      sampleSeconds += sampleNow(globalStep, lastEpoch);
  }
  // Rank 0 serves the ranks' store: every rank is done with it before any leaves.
  if (run.group) run.group->barrier();
  const double trainSeconds = seconds(trainStart) - sampleSeconds - validationSeconds - pausedSeconds;
  events.emit(events::Done{stopped ? "stopped" : "completed", globalStep, trainSeconds, earlyStopped ? "early_stop" : "",
                           earlyStopped ? best.stopMessage() : ""});
  spdlog::info("{} after {} steps in {:.1f} s (warm-up {:.1f} s; sample images another {:.1f} s, validation {:.1f} s, paused {:.1f} s)",
               stopped ? "stopped" : "completed", globalStep, trainSeconds, warmup.total(), firstSampleSeconds + sampleSeconds,
               validationSeconds, pausedSeconds);
  return 0;
}

}  // namespace sinter::train

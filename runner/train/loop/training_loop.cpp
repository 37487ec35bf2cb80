#include "train/loop/training_loop.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>
#include <filesystem>
#include <map>

#include "data/batch_loader.h"
#include "data/batch_plan.h"
#include "distributed/rank_agreement.h"
#include "models/linear.h"
#include "compile/gemm_tuning.h"
#include "train/base/config_values.h"
#include "train/base/device_info.h"
#include "train/base/vram_budget.h"
#include "train/bench/step_profiler.h"
#include "train/capture/graphed_regions.h"
#include "train/capture/step_executor.h"
#include "train/parts/family_registration.h"
#include "train/loop/batch_stager.h"
#include "train/loop/loss_readback.h"
#include "train/loop/progress_meter.h"
#include "train/loop/rank_noise_states.h"
#include "train/loop/run_preflight.h"
#include "train/loop/sample_images.h"
#include "train/loop/stop_request.h"
#include "train/loop/validation_pass.h"
#include "train/loop/tracker_settings.h"
#include "train/loop/training_log.h"
#include "train/optim/fused_backward.h"
#include "train/optim/lr_schedule_config.h"
#include "train/optim/make_optimizer.h"
#include "train/optim/optimizer_args.h"
#include "train/optim/optimizer_update.h"
#include "train/optim/optimizer_choice.h"
#include "train/loop/resume_position.h"
#include "train/base/run_errors.h"

namespace sinter::train {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// "2x1024x768": batch size and bucket, as the log and the warm-up events name a batch shape.
std::string signatureLabel(long long batchSize, const data::Resolution& bucket) {
  return std::to_string(batchSize) + "x" + data::toString(bucket);
}

}  // namespace

LoopOptions LoopOptions::fromConfig(const Config& config, const PrecisionPlan& precision) {
  LoopOptions o;
  o.outputDir = config.getString("output_dir");
  o.outputName = train::outputName(config);
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
                    bool& trainingStarted) {
  const LoopOptions options = LoopOptions::fromConfig(run.config, run.precision);
  EventSink& events = run.events;
  const int gradAccum = options.gradientAccumulationSteps;
  // Several ranks: each trains on its shard of every epoch, only rank 0 writes files and events.
  distributed::ProcessGroup* group = run.group;
  const bool writes = run.rank() == 0;
  const data::BatchShard shard{run.rank(), run.worldSize()};
  const data::BatchPlan plan(dataset, run.seed, shard);
  const RunSchedule planned = planSchedule(options, plan.batchesPerEpoch());
  const data::TrainingLength& length = planned.length;
  checkInitialStep(options, planned);
  method.describeRun(dataset, plan.batchesPerEpoch(), length.numEpochs, length.maxTrainSteps, gradAccum);

  // Optimizer and schedule.
  if (options.lrSchedulerReplaced)
    spdlog::info("Adafactor with relative_step: its own relative step sets the learning rate (the adafactor schedule, as "
                 "sd-scripts switches to it), not lr_scheduler '{}' and learning_rate",
                 run.config.getString("lr_scheduler"));
  const std::unique_ptr<Optimizer> optimizerOwned = makeOptimizer(options.optimizer, method.parameterGroups(), options.fusedBackwardPass);
  Optimizer& optimizer = *optimizerOwned;
  const LrSchedule schedule(planned.lr);
  OptimizerUpdate update(optimizer, schedule, options.maxGradNorm, options.lossScaling, run.device, method.computeCopies(),
                         options.fusedBackwardPass);
  update.setAfterStep(method.afterOptimizerStep());
  // Weights derived once per step rather than per micro-batch (LyCORIS's full-size deltas), where
  // a step has several micro-batches; not where parameters step inside the backward pass, where
  // several ranks reduce gradients as backward completes them, or where blocks swap out.
  if (gradAccum > 1 && !options.fusedBackwardPass && !group && family.blockSwaps().empty())
    if (std::optional<StepDerivedWeights> derived = method.derivePerStep()) update.setDerivedWeights(std::move(*derived));
  const std::vector<std::string> figureNames = method.stepFigureNames();
  // A full-weight run's swapped blocks train too: their weights are stepped in the backward pass
  // (the run refuses blocks_to_swap without fused_backward_pass: full_weights_method.h).
  if (FusedBackwardPass* fused = update.fusedBackwardPass())
    for (const auto& swap : family.blockSwaps()) fused->stepStreamedWeights(swap);
  // Several ranks start from rank 0's weights and average their gradients before every update.
  std::optional<distributed::StopAgreement> stopAgreement;
  if (group) {
    update.averageGradientsAcross(*group, ddpCommunication(run.config), family.facts().overlapGradientReduction);
    stopAgreement.emplace(*group);
    spdlog::info("data parallel: {} ranks, {}", group->size(), update.describeAveraging());
  }
  // Whether the run stops after `step` (with several ranks, as rank 0 decides for all).
  auto stopAfter = [&](long long step) {
    return stopAgreement ? stopAgreement->stopAfter(step, stopRequested()) : stopRequested();
  };
  if (options.fusedBackwardPass)
    spdlog::info("{}: each parameter is stepped by {} as soon as its gradient is complete{}", fusedBackwardOption(run.config),
                 options.optimizer.type, options.maxGradNorm > 0 ? " (clipped by its own norm)" : "");
  // The compile plan applied: micro-steps run eagerly or replay a captured graph of the whole step,
  // or the family's blocks replay graphs of their own.
  const std::vector<at::Generator> generators{family.generator(), at::globalContext().defaultGenerator(run.device)};  // noise; LoRA dropout
  std::optional<GraphedRegions> regions;
  if (run.compile.captureRegions) {
    regions.emplace(run.device, run.compile.cacheLimit, generators);
    family.captureRegions(&*regions);
    // Sample images replay the blocks' training graphs where the shapes fit, unless LoRA dropout
    // (which those graphs apply) is on.
    bool dropout = false;
    for (const TrainableModel& m : family.trainableModels()) dropout |= m.module && models::anyLoraDropout(*m.module);
    regions->reuseForInference(!dropout);
  }
  struct ReleaseRegions {
    FamilyPart& family;
    bool captured;
    ~ReleaseRegions() {
      if (captured) family.captureRegions(nullptr);
    }
  } releaseRegions{family, regions.has_value()};
  StepExecutorOptions execution;
  execution.captureSteps = run.compile.captureSteps;
  if (regions) execution.regions = &*regions;
  execution.fatalOnCaptureFailure = run.compile.request.fullgraph;
  execution.cacheLimit = run.compile.cacheLimit;
  execution.lossDivisor = gradAccum;
  execution.captureInTraining = group == nullptr;
  StepExecutor executor(run.device, update, execution, generators);

  // How this run cuts its epochs: saved with every state, compared on resume.
  const long long batchSize = dataset.datasets.empty() ? 1 : dataset.datasets.front().batchSize;
  const EpochLayout epochLayout{run.worldSize(), batchSize, plan.allBatchesPerEpoch()};

  // Resume: the method's tensors, optimizer, noise RNG and data position continue exactly.
  long long globalStep = 0;
  data::DataOrderState position{run.seed, 0, 0};
  if (!options.resume.empty()) {
    TrainState state = loadTrainState(options.resume);
    // Every field checked against this run before any of it is used (resume_position.h, optimizer.h).
    const std::string stateFile = (fs::path(options.resume) / "train_state.json").string();
    checkResumeProgress(state.progress, epochLayout, length.maxTrainSteps, options.initialStep || options.initialEpoch, stateFile);
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
    globalStep = state.progress.at("global_step").get<long long>();
    // Saved by another number of ranks or with another batch size, the position is carried over as
    // the share of the epoch already trained (resume_position.h).
    ResumedDataPosition resumed = resumeDataPosition(state.progress.at("data"), epochLayout, options.resume);
    position = resumed.position;
    for (const std::string& warning : resumed.warnings) {
      spdlog::warn("{}", warning);
      events.emit(events::Warning{warning});
    }
    if (position.seed != run.seed) spdlog::warn("resume: the data order continues with the saved seed {}", position.seed);
    spdlog::info("resumed from {} at step {}", options.resume, globalStep);
  }
  // What the lr schedule reads: the optimizer's completed steps (a resumed state's, or 0).
  long long scheduleStep = static_cast<long long>(optimizer.stepCount().item<double>());
  // initial_step / initial_epoch (train_network.py): the step and epoch counters start there, in
  // place of a resumed state's step; the lr schedule keeps its own count. The data goes on from that
  // step's batch with skip_until_initial_step, else from the start of its epoch.
  if (options.initialStep || options.initialEpoch) {
    const std::string key = options.initialStep ? "initial_step" : "initial_epoch";
    if (!options.resume.empty())
      spdlog::warn("resume: the step saved in {} ({}) is ignored because {} is set (as sd-scripts does); the optimizer and the lr "
                   "schedule continue from the state", options.resume, globalStep, key);
    globalStep = planned.initialStep;
    position = options.skipUntilInitialStep
                   ? data::positionForStep(position.seed, globalStep, plan.batchesPerEpoch(), gradAccum)
                   : data::DataOrderState{position.seed, globalStep / std::max(1LL, length.stepsPerEpoch), 0};
    spdlog::info("{}: training starts at step {} of {} (epoch {}), the data {}; the lr schedule {}", key, globalStep,
                 length.maxTrainSteps, position.epoch + 1,
                 options.skipUntilInitialStep ? "from that step's batch (skip_until_initial_step)" : "from the start of that epoch",
                 options.resume.empty() ? "starts from its beginning (initial_step does not move it; a resumed state does)"
                                        : "continues from the state at its step " + std::to_string(scheduleStep));
  }
  const long long startStep = globalStep;
  data::LoaderOptions loaderOptions;
  loaderOptions.workers = options.workers;
  loaderOptions.maxTrainSteps = length.maxTrainSteps;
  loaderOptions.gradientAccumulationSteps = gradAccum;
  loaderOptions.tokenize = family.captionTokenizer();
  const data::BatchPlan resumedPlan(dataset, position.seed, shard);
  data::BatchLoader loader(dataset, resumedPlan, loaderOptions, family.latentCache(), family.textCache());
  loader.seek(position);
  // The next batch moves to the device while the current step computes.
  BatchStager stager(run.device);
  auto nextBatch = [&] {
    if (!stager.hasStaged()) stager.stage(loader.next());
    data::Batch batch = stager.take();
    stager.stage(loader.next());
    return batch;
  };
  // Where a resumed run continues: the first batch not trained on (one may be staged already).
  auto dataPosition = [&] { return stager.hasStaged() ? stager.stagedPosition(loader.state().seed) : loader.state(); };

  // sd-scripts' summary, then the start event.
  spdlog::info("running training");
  spdlog::info("  dataset: {} images, {} skipped", dataset.images.size(), dataset.skipped.size());
  spdlog::info("  num train images * repeats: {}", dataset.numTrainImages);
  spdlog::info("  num reg images: {}", dataset.numRegImages);
  // validation_split: the held-out images' loss, on rank 0 (the others wait at the next step's all-reduce).
  std::optional<ValidationPass> validation;
  if (dataset.numValidationImages > 0) {
    spdlog::info("  num validation images * repeats: {}", dataset.numValidationImages);
    if (writes) validation.emplace(run, family, dataset, loaderOptions);
  }
  spdlog::info("  num batches per epoch: {}", plan.batchesPerEpoch());
  if (group) spdlog::info("  processes: {} (each takes one of every {} batches of an epoch)", group->size(), group->size());
  spdlog::info("  num epochs: {}", length.numEpochs);
  spdlog::info("  batch size per device: {}", batchSize);
  spdlog::info("  gradient accumulation steps: {}", gradAccum);
  spdlog::info("  total batch size (with parallel & distributed & accumulation): {}", batchSize * run.worldSize() * gradAccum);
  spdlog::info("  total optimization steps: {}", length.maxTrainSteps);
  spdlog::info("setup took {:.1f} s", seconds(run.setupStart));
  // With several ranks the app's run line says how many train: "cuda:0 (NVIDIA H200) + 1 more rank".
  const std::string devices = describeDevice(run.device) + (run.worldSize() > 1 ? " + " + std::to_string(run.worldSize() - 1) +
                                                                                      (run.worldSize() == 2 ? " more rank" : " more ranks")
                                                                                : std::string());
  const std::vector<std::string> tokenizers = tokenizerLines(run.config);
  for (const std::string& line : tokenizers) spdlog::info("  {}", line);
  events.emit(events::Start{SINTER_VERSION, devices, family.facts().familyName, toString(run.config.tab()), length.maxTrainSteps,
                            length.numEpochs, tokenizers, static_cast<long long>(dataset.images.size()),
                            static_cast<long long>(dataset.skipped.size())});

  // Saving, with sd-scripts' names.
  const std::string& name = options.outputName;
  auto saveModel = [&](const std::string& stem, const std::string& kind, long long epoch) {
    if (!writes) return;
    SaveInProgress saving;
    const std::string path = (fs::path(options.outputDir) / (stem + ".safetensors")).string();
    method.saveModel(path, SaveStamp{globalStep, epoch});
    spdlog::info("saved {}", path);
    events.emit(events::Saved{path, kind});
  };
  long long stateSaves = 0;
  auto saveState = [&](const std::string& folderName) {
    TrainState state;
    const torch::Tensor noise = generatorState(family.generator());
    state.rng = {{"device", noise}};
    if (group) gatherNoiseStates(*group, noise, ++stateSaves, state.rng);  // every rank's, written by rank 0
    if (!writes) return;
    SaveInProgress saving;
    state.network = method.stateTensors();
    state.optimizer = optimizer.stateTensors();
    const data::DataOrderState p = dataPosition();
    state.progress = {{"global_step", globalStep}, {"data", dataPositionJson(p, epochLayout)}};
    const std::string path = (fs::path(options.outputDir) / folderName).string();
    saveTrainState(path, state);
    spdlog::info("saved state {}", path);
    events.emit(events::Saved{path, "state"});
  };
  // A save that fell out of its kept window (save_last_n_*; states by save_last_n_*_state).
  auto removeModel = [&](const std::string& stem) {
    std::error_code ec;
    if (writes && fs::remove(fs::path(options.outputDir) / (stem + ".safetensors"), ec)) spdlog::info("removed old model {}.safetensors", stem);
  };
  auto removeState = [&](const std::string& stateFolder) {
    std::error_code ec;
    if (writes && fs::remove_all(fs::path(options.outputDir) / stateFolder, ec) > 0) spdlog::info("removed old state {}", stateFolder);
  };

  // The TensorBoard log (rank 0): D-Adaptation's and Prodigy's step size is read back a step late,
  // as the loss is.
  TrainingLog log(TrackerSettings::fromConfig(run.config), run.config, writes, events, std::time(nullptr));
  const std::optional<torch::Tensor> stepSizeEstimate = log.active() ? optimizer.globalState("d") : std::nullopt;
  LossReadback stepSizeReadback;

  // Training.
  trainingStarted = true;
  if (stopAfter(0)) {
    spdlog::info("stopped before the first step as requested; nothing was trained");
    if (group) group->barrier();  // rank 0's store serves the others' answer before it leaves
    events.emit(events::Done{"stopped", globalStep, 0.0});
    return 0;
  }
  const bool textEncodersTrain = method.trainsTextEncoders();
  family.setTraining(textEncodersTrain);
  ProgressMeter meter(length.maxTrainSteps, std::max(1LL, length.stepsPerEpoch));
  const bool progressLine = ::isatty(2) && !events.jsonl();
  const bool resumed = !options.resume.empty();
  double warmupSeconds = 0;
  auto reportWarmup = [&](const std::string& what, double s) {
    warmupSeconds += s;
    events.emit(events::Warmup{what, s});
    spdlog::info("warm-up ({}): {:.2f} s", what, s);
  };
  // What the blocks captured since last asked: their failures reported, the seconds it took returned.
  auto takeRegionCaptures = [&] {
    for (const std::string& failure : regions->takeFailures()) {
      spdlog::warn("{}", failure);
      events.emit(events::Warning{failure});
    }
    return regions->takeCaptureSeconds();
  };
  // A step ends its accumulation on its last micro-batch: graphs with and without the update.
  const std::vector<bool> lastMicroBatch = gradAccum == 1 ? std::vector<bool>{true} : std::vector<bool>{false, true};
  // max-autotune: GEMMs are tuned when they first run, which is the warm-up (before any capture).
  if (run.compile.tuneGemms) spdlog::info("{}", compile::enableGemmTuning(compile::defaultGemmTuningFile()));
  // Staged inputs (static buffers) where something is captured; with trained text encoders only
  // where the family's staged loss runs them (their token ids staged), else the step runs eagerly
  // and only blocks are captured.
  const bool staged = executor.captures() && (!textEncodersTrain || !stagedTextEncodersFor(run.config).empty());
  if (executor.captures() && run.compile.precapture && !staged)
    spdlog::info("warm-up: the blocks are captured when first seen (the text encoders train, so no batch is staged ahead)");
  if (staged && run.compile.precapture) {
    // Warm-up phase: the planned signatures captured before step 1, most frequent first.
    const auto& signatures = plan.shapeSignatures();
    const size_t captured = std::min(signatures.size(), static_cast<size_t>(run.compile.cacheLimit));
    spdlog::info("warm-up: capturing {} for {} of {} batch shapes", execution.captureSteps ? "the training step" : "the blocks", captured,
                 signatures.size());
    for (size_t i = 0; i < captured; ++i) {
      const StepShape shape = family.stageWarmup(signatures[i]);
      double seconds = 0;
      for (bool last : lastMicroBatch)
        if (auto s = executor.prepare(shape, last, [&] { return family.stagedLoss(shape); })) seconds += *s;
      reportWarmup(signatureLabel(signatures[i].batchSize, data::Resolution{signatures[i].width, signatures[i].height}), seconds);
    }
    spdlog::info("graphs cover {:.1f}% of an epoch's batches", 100.0 * shareOfBatches(signatures, captured));
    if (regions) takeRegionCaptures();  // counted in the warm-up above
  }
  // Without graphs captured ahead, the first step allocates buffers and picks kernels: it is the warm-up.
  const bool firstStepIsWarmup = !resumed && !executor.captures();  // the run's first step, startStep + 1
  // Sample images: their time is kept out of the steps' (and so out of it/s and ETA) and the total.
  // With several ranks, rank 0 alone makes them (the others wait at the next step's all-reduce).
  SampleImages samples(run, family);
  const double firstSampleSeconds =
      writes && samples.schedule().beforeTraining() ? samples.make(globalStep, std::nullopt, textEncodersTrain) : 0;
  double sampleSeconds = 0;  // while training
  double validationSeconds = 0;  // kept out of the steps' time and the total, as sample images
  if (validation && validation->enabled())
    spdlog::info("validation: {} batches x {} timesteps per pass", validation->batches(), validation->timesteps());
  // A validation pass after `step`: its event and log line (sd-scripts' loss/validation/*_average).
  auto validate = [&](long long step, long long epoch, const char* kind) {
    const auto start = Clock::now();
    const double loss = validation->run(textEncodersTrain);
    const double s = seconds(start);
    validationSeconds += s;
    if (!std::isfinite(loss)) throw std::runtime_error("the validation loss is " + std::to_string(loss) + " at step " + std::to_string(step));
    if (progressLine) std::fprintf(stderr, "\n");
    spdlog::info("validation loss ({}) at step {}, epoch {}: {:.6f} ({:.1f} s)", kind, step, epoch, loss, s);
    events.emit(events::Validation{step, epoch, loss, kind});
    const bool epochEnd = std::string(kind) == "epoch";
    if (log.active()) log.validation(epochEnd, epochEnd ? epoch : step, loss, meter.averageLoss());
  };
  // vram_budget_gb: the start's peak (loading, caches, warm-up, samples before training) is reported
  // here, then the peak after step 1 is the step's alone, each set against the plan
  // (base/vram_budget.h); rank 0 reports them.
  std::optional<VramBudgetCheck> vramBudget;
  if (run.device.is_cuda() && run.rank() == 0 && run.config.family()) vramBudget = vramBudgetCheck(run.config, *run.config.family());
  if (vramBudget) {
    reportStartPeak(*vramBudget, deviceMemoryPeakBytes(run.device), events);
    resetPeakMemory(run.device);
  }
  const auto trainStart = Clock::now();
  bool stopped = false;

  // What the loop reports of a step once its loss is read back (a step late, see LossReadback).
  struct StepFacts {
    long long epoch = 0;
    double lr = 0, seconds = 0;
    std::string signature;
    std::vector<double> loggedLrs;  // each group's, after the step (the TensorBoard log's)
  };
  std::map<long long, StepFacts> unreported;
  LossReadback readback;
  auto report = [&](bool includeNewest) {
    std::map<long long, double> stepSizes;
    if (stepSizeEstimate)
      for (const auto& [step, d] : stepSizeReadback.take(includeNewest)) stepSizes[step] = d;
    for (const LossReadback::Reading& reading : readback.takeReadings(includeNewest)) {
      const long long step = reading.step;
      const double loss = reading.loss;
      const StepFacts f = unreported.at(step);
      unreported.erase(step);
      if (!std::isfinite(loss)) throw std::runtime_error("the loss is " + std::to_string(loss) + " at step " + std::to_string(step));
      const bool warmup = step == startStep + 1 && firstStepIsWarmup;
      if (warmup) reportWarmup("first step, " + f.signature, f.seconds);
      meter.record(loss, warmup ? std::nullopt : std::optional<double>(f.seconds));
      events::Step s;
      s.step = step, s.total = length.maxTrainSteps, s.epoch = f.epoch + 1, s.loss = loss, s.avg_loss = meter.averageLoss();
      s.lr = f.lr, s.it_per_s = meter.itPerSecond(), s.eta_s = meter.etaSeconds(step), s.step_ms = f.seconds * 1000.0;
      s.peak_mem_mb = peakMemoryMb(run.device);
      if (vramBudget && step == startStep + 1) reportVramPeak(*vramBudget, deviceMemoryPeakBytes(run.device), events);
      for (size_t i = 0; i < figureNames.size() && i < reading.figures.size(); ++i)
        s.figures.emplace_back(figureNames[i], reading.figures[i]);
      events.emit(s);
      if (log.active()) {
        std::vector<GroupRate> rates;
        for (size_t g = 0; g < f.loggedLrs.size(); ++g) {
          GroupRate r{optimizer.group(g).label, f.loggedLrs[g], std::nullopt};
          if (auto d = stepSizes.find(step); d != stepSizes.end()) r.d = d->second;
          rates.push_back(r);
        }
        log.step(step, loss, meter.averageLoss(), rates, s.figures);
      }
      std::string line = meter.line(step);
      for (const auto& [name, value] : s.figures) line += fmt::format(", {} {:.4g}", name, value);
      if (progressLine) std::fprintf(stderr, "\r%s", line.c_str());
      else if (step % 10 == 0 || step == length.maxTrainSteps) spdlog::info("{}", line);
    }
  };

  StepProfiler profiler(writes ? options.profileSteps : 0, length.maxTrainSteps,
                        (fs::path(options.outputDir) / (name + "-profile.json")).string(), run.device);
  auto profileWritten = [&](const std::optional<std::string>& path) {
    if (!path) return;
    spdlog::info("profile of {} steps written to {} (open it in Perfetto or chrome://tracing)", options.profileSteps, *path);
    events.emit(events::Saved{*path, "profile"});
  };

  // A step's time is the interval between the same point of consecutive iterations (the GPU works
  // a step ahead of the host), less the time spent saving.
  auto lastMark = trainStart;
  double savingSeconds = 0;
  // The last step's epoch (1-based) and whether that step finished it: sd-scripts' last sample_images call.
  long long lastEpoch = 0;
  bool lastEpochFinished = true;
  while (globalStep < length.maxTrainSteps) {
    torch::Tensor lossSum;
    int micro = 0;
    bool epochEnds = false;
    StepFacts facts;
    double captureSeconds = 0;
    try {
      profiler.stepStarts(globalStep + 1);
    } catch (const std::exception& e) {
      spdlog::warn("{}", e.what());
      events.emit(events::Warning{e.what()});
    }
    facts.lr = optimizer.ownLearningRate(scheduleStep + 1).value_or(schedule.learningRate(optimizer.group(0).lr, scheduleStep));
    do {
      data::Batch batch = nextBatch();
      facts.epoch = batch.epoch;
      facts.signature = signatureLabel(batch.lossWeights.size(0), batch.bucket);
      epochEnds = batch.indexInEpoch + 1 == plan.batchesPerEpoch();
      const bool last = micro + 1 == gradAccum || epochEnds;
      torch::Tensor loss;
      if (staged) {
        const StepShape shape = family.stage(batch);
        MicroStepResult r = executor.run(shape, last, [&] { return family.stagedLoss(shape); });
        if (r.captureFailure) {
          const std::string message = "the training step for " + facts.signature + " could not be captured and runs eagerly: " +
                                      *r.captureFailure;
          spdlog::warn("{}", message);
          events.emit(events::Warning{message});
        }
        if (r.capturedSeconds) reportWarmup("captured " + facts.signature, *r.capturedSeconds), captureSeconds += *r.capturedSeconds;
        loss = r.loss;
      } else {
        loss = executor.runEager([&] { return family.loss(batch, textEncodersTrain); }, last);
      }
      if (regions) {
        // Blocks seen with a new signature were captured within this micro-step.
        const double s = takeRegionCaptures();
        if (s > 0) reportWarmup("captured blocks for " + facts.signature, s), captureSeconds += s;
      }
      lossSum = lossSum.defined() ? lossSum + loss : loss;
      ++micro;
    } while (micro < gradAccum && !epochEnds);
    ++globalStep;
    ++scheduleStep;
    readback.push(globalStep, lossSum / micro, method.stepFigures());
    if (log.active()) {
      // sd-scripts logs lr_scheduler.get_last_lr(): the rate after this step's scheduler step.
      const std::optional<double> own = optimizer.ownLearningRate(scheduleStep);
      for (size_t g = 0; g < optimizer.groupCount(); ++g)
        facts.loggedLrs.push_back(own.value_or(schedule.learningRate(optimizer.group(g).lr, scheduleStep)));
      if (stepSizeEstimate) stepSizeReadback.push(globalStep, stepSizeEstimate->detach().clone());
    }
    const auto mark = Clock::now();
    facts.seconds = std::chrono::duration<double>(mark - lastMark).count() - savingSeconds - captureSeconds;
    lastMark = mark;
    unreported[globalStep] = facts;

    const long long epoch = facts.epoch;
    lastEpoch = epoch + 1;
    lastEpochFinished = epochEnds;
    const bool saveStep = options.saves.saveAfterStep(globalStep, length.maxTrainSteps);
    const bool saveEpoch = epochEnds && options.saves.saveAfterEpoch(epoch + 1, length.numEpochs) && globalStep < length.maxTrainSteps;
    const bool stopNow = stopAfter(globalStep) && globalStep < length.maxTrainSteps;
    const bool sampleStep = writes && samples.schedule().afterStep(globalStep);
    const bool validateStep = validation && validation->afterStep(globalStep);
    // The last step ends its epoch for validation too (sd-scripts validates after the loop's break).
    const bool validateEpoch = validation && (epochEnds || globalStep == length.maxTrainSteps) && validation->afterEpoch(epoch + 1);
    // A save, a sample, a validation, an epoch's end or a stop waits for the step anyway: report it now.
    report(saveStep || sampleStep || validateStep || validateEpoch || epochEnds || stopNow || globalStep == length.maxTrainSteps);

    const auto savingStart = Clock::now();
    profileWritten(profiler.stepEnded(globalStep));
    if (sampleStep) sampleSeconds += samples.make(globalStep, std::nullopt, textEncodersTrain);
    if (saveStep) {
      saveModel(stepFileStem(name, globalStep), "step", epoch + 1);
      if (options.saves.saveState) saveState(stepStateFolderName(name, globalStep));
      if (auto old = options.saves.stepToRemove(globalStep)) removeModel(stepFileStem(name, *old));
      if (auto old = options.saves.stepStateToRemove(globalStep)) removeState(stepStateFolderName(name, *old));
    }
    if (validateStep) validate(globalStep, epoch + 1, "step");
    if (validateEpoch) validate(globalStep, epoch + 1, "epoch");
    if (epochEnds) {
      const long long done = epoch + 1;
      events.emit(events::Epoch{done, length.numEpochs, globalStep, meter.averageLoss()});
      log.epochEnd(done, meter.averageLoss());
      log.flush();
      if (progressLine) std::fprintf(stderr, "\n");
      spdlog::info("epoch {}/{} done", done, length.numEpochs);
      if (saveEpoch) {
        saveModel(epochFileStem(name, done), "epoch", done);
        if (options.saves.saveState) saveState(epochStateFolderName(name, done));
        if (auto old = options.saves.epochToRemove(done)) removeModel(epochFileStem(name, *old));
        if (auto old = options.saves.epochStateToRemove(done)) removeState(epochStateFolderName(name, *old));
      }
      if (writes && samples.schedule().afterEpoch(done)) sampleSeconds += samples.make(globalStep, done, textEncodersTrain);
    }
    if (stopNow) {
      if (progressLine) std::fprintf(stderr, "\n");
      spdlog::info("stopping at step {} as requested", globalStep);
      saveModel(stepFileStem(name, globalStep), "stopped", epoch + 1);
      saveState(stepStateFolderName(name, globalStep));
      stopped = true;
      break;
    }
    savingSeconds = seconds(savingStart);
  }
  report(true);
  log.close();
  profileWritten(profiler.finish());
  if (group) {
    distributed::requireIdenticalWeights(*group, optimizer.parameters());
    spdlog::info("the trained weights are identical on all {} ranks", group->size());
  }
  if (progressLine) std::fprintf(stderr, "\n");
  if (executor.captures()) {
    spdlog::info("CUDA graphs: {:.1f}% of the {} replayed", 100.0 * replayedShare(executor, regions ? &*regions : nullptr),
                 regions ? "block passes" : "micro-batches");
    if (regions && regions->inferenceReplays() > 0)
      spdlog::info("sample images replayed {} block passes from the training graphs", regions->inferenceReplays());
  }
  if (!stopped) {
    saveModel(name, "final", length.numEpochs);
    if (options.saves.saveState || options.saves.saveStateOnTrainEnd) saveState(lastStateFolderName(name));
    spdlog::info("model saved: {}", (fs::path(options.outputDir) / (name + ".safetensors")).string());
    if (writes && samples.schedule().atRunEnd(lastEpoch, lastEpochFinished))
      sampleSeconds += samples.make(globalStep, lastEpoch, textEncodersTrain);
  }
  // Rank 0 serves the ranks' store: every rank is done with it before any leaves.
  if (group) group->barrier();
  const double trainSeconds = seconds(trainStart) - sampleSeconds - validationSeconds;
  events.emit(events::Done{stopped ? "stopped" : "completed", globalStep, trainSeconds});
  spdlog::info("{} after {} steps in {:.1f} s (warm-up {:.1f} s; sample images another {:.1f} s, validation {:.1f} s)",
               stopped ? "stopped" : "completed", globalStep, trainSeconds, warmupSeconds, firstSampleSeconds + sampleSeconds,
               validationSeconds);
  return 0;
}

}  // namespace sinter::train

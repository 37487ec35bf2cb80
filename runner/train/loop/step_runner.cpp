#include "train/loop/step_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "compile/gemm_tuning.h"
#include "models/layers/linear.h"
#include "train/base/config_values.h"
#include "train/base/shape_plan.h"
#include "train/loop/stop_request.h"
#include "train/optim/fused_backward.h"
#include "train/optim/make_optimizer.h"
#include "train/optim/optimizer_update.h"
#include "train/parts/family_registration.h"

namespace sinter::train {

StepRunner::StepRunner(const RunContext& run, FamilyPart& family, MethodPart& method, const LoopOptions& options,
                       const RunSchedule& planned)
    : run_(run), family_(family), gradAccum_(options.gradientAccumulationSteps),
      optimizer_(makeOptimizer(options.optimizer, method.parameterGroups(), options.fusedBackwardPass)), schedule_(planned.lr) {
  if (options.lrSchedulerReplaced)
    spdlog::info("Adafactor with relative_step: its own relative step sets the learning rate (the adafactor schedule, as "
                 "sd-scripts switches to it), not lr_scheduler '{}' and learning_rate",
                 run.config.getString("lr_scheduler"));
  update_ = std::make_unique<OptimizerUpdate>(*optimizer_, schedule_, options.maxGradNorm, options.lossScaling, run.device,
                                              method.computeCopies(), options.fusedBackwardPass);
  update_->setAfterStep(method.afterOptimizerStep());
  // Weights derived once per step rather than per micro-batch (LyCORIS's full-size deltas), where
  // a step has several micro-batches; not where parameters step inside the backward pass, where
  // several ranks reduce gradients as backward completes them, or where blocks swap out.
  if (gradAccum_ > 1 && !options.fusedBackwardPass && !run.group && family.blockSwaps().empty())
    if (std::optional<StepDerivedWeights> derived = method.derivePerStep()) update_->setDerivedWeights(std::move(*derived));
  // A full-weight run's swapped blocks train too: their weights are stepped in the backward pass
  // (the run refuses blocks_to_swap without fused_backward_pass: full_weights_method.h).
  if (FusedBackwardPass* fused = update_->fusedBackwardPass())
    for (const auto& swap : family.blockSwaps()) fused->stepStreamedWeights(swap);
  // Several ranks start from rank 0's weights and average their gradients before every update.
  if (run.group) {
    update_->averageGradientsAcross(*run.group, ddpCommunication(run.config), family.facts().overlapGradientReduction);
    stopAgreement_.emplace(*run.group);
    spdlog::info("data parallel: {} ranks, {}", run.group->size(), update_->describeAveraging());
  }
  if (options.fusedBackwardPass)
    spdlog::info("{}: each parameter is stepped by {} as soon as its gradient is complete{}", fusedBackwardOption(run.config),
                 options.optimizer.type, options.maxGradNorm > 0 ? " (clipped by its own norm)" : "");
  // The compile plan applied: micro-steps run eagerly or replay a captured graph of the whole step,
  // or the family's blocks replay graphs of their own.
  generators_ = {family.generator(), at::globalContext().defaultGenerator(run.device)};
  bool loraDropout = false;
  for (const TrainableModel& m : family.trainableModels()) loraDropout |= m.module && models::anyLoraDropout(*m.module);
  if (run.compile.captureRegions) {
    regions_.emplace(run.device, run.compile.cacheLimit, generators_);
    family.captureRegions(&*regions_);
    // Sample images replay the blocks' training graphs where the shapes fit, unless LoRA dropout
    // (which those graphs apply) is on.
    regions_->reuseForInference(!loraDropout);
  }
  StepExecutorOptions execution;
  execution.captureSteps = run.compile.captureSteps;
  if (regions_) execution.regions = &*regions_;
  // The runner's own capture (planAutomaticCapture) was not asked for: a shape it cannot capture runs eagerly.
  execution.fatalOnCaptureFailure = run.compile.request.fullgraph && run.compile.automatic.empty();
  execution.cacheLimit = run.compile.cacheLimit;
  execution.lossDivisor = gradAccum_;
  execution.captureInTraining = run.group == nullptr;
  executor_ = std::make_unique<StepExecutor>(run.device, *update_, execution, generators_);
  // Batched gradient accumulation: a step's micro-batches of one shape as one pass, where the run allows.
  const JoiningFacts joiningFacts{gradAccum_, options.fusedBackwardPass, !family.blockSwaps().empty(), loraDropout,
                                  gradAccum_ > 1 ? family.microBatchJoinRefusal() : ""};
  joining_ = std::make_unique<MicroBatchJoining>(gradAccum_, run.device, microBatchJoiningRefusal(joiningFacts),
                                                 optionalDouble(run.config, "vram_budget_gb").value_or(0.0) * 1073741824.0);
}

StepRunner::~StepRunner() {
  executor_.reset();
  if (regions_) family_.captureRegions(nullptr);
}

bool StepRunner::stopAfter(long long step) { return stopAgreement_ ? stopAgreement_->stopAfter(step, stopRequested()) : stopRequested(); }

double StepRunner::takeRegionCaptures() {
  for (const std::string& failure : regions_->takeFailures()) {
    spdlog::warn("{}", failure);
    run_.events.emit(events::Warning{failure});
  }
  return regions_->takeCaptureSeconds();
}

long long StepRunner::regionReplays() const { return regions_ ? regions_->replayed() : 0; }

void StepRunner::warmUp(bool textEncodersTrain, const data::BatchPlan& plan, WarmupClock& clock) {
  textEncodersTrain_ = textEncodersTrain;
  const auto& signatures = plan.shapeSignatures();
  if (gradAccum_ > 1) {
    int batchSize = 1;
    for (const data::ShapeSignature& s : signatures) batchSize = std::max(batchSize, s.batchSize);
    spdlog::info("{}", joining_->headline(batchSize));
  }
  // max-autotune: GEMMs are tuned when they first run, which is the warm-up (before any capture).
  if (run_.compile.tuneGemms) spdlog::info("{}", compile::enableGemmTuning(compile::defaultGemmTuningFile()));
  staged_ = captures() && (!textEncodersTrain || !stagedTextEncodersFor(run_.config).empty());
  if (captures() && run_.compile.precapture && !staged_)
    spdlog::info("warm-up: the blocks are captured when first seen (the text encoders train, so no batch is staged ahead)");
  if (!staged_ || !run_.compile.precapture) return;
  // A step ends its accumulation on its last micro-batch: graphs with and without the update.
  const std::vector<bool> lastMicroBatch = gradAccum_ == 1 ? std::vector<bool>{true} : std::vector<bool>{false, true};
  const size_t captured = std::min(signatures.size(), static_cast<size_t>(run_.compile.cacheLimit));
  spdlog::info("warm-up: capturing {} for {} of {} batch shapes", run_.compile.captureSteps ? "the training step" : "the blocks",
               captured, signatures.size());
  size_t covered = 0, joinedShapes = 0;  // the signatures up to the last one captured; the joined shapes captured
  for (size_t i = 0; i < captured; ++i) {
    const StepShape shape = family_.stageWarmup(signatures[i]);
    const std::string label = batchSignatureLabel(signatures[i].batchSize, data::Resolution{signatures[i].width, signatures[i].height});
    // The warm-up's eager runs measure a micro-batch's memory (not where blocks replayed theirs).
    const int64_t allocatedBefore = joining_->memory().allocatedNow();
    const long long replaysBefore = regionReplays();
    double seconds = 0;
    bool ran = false;
    for (bool last : lastMicroBatch)
      if (auto s = executor_->prepare(shape, last, [&] { return family_.stagedLoss(shape); })) seconds += *s, ran = true;
    clock.add(label, seconds);
    if (!ran) continue;  // its capture failed, or the cache limit (which counts the joined shapes too) is reached
    covered = i + 1;
    if (joining_->on() && regionReplays() == replaysBefore) joining_->memory().measured({label}, allocatedBefore);
    // The shape joined, as a step of micro-batches of it runs where they join and fit (one graph
    // with the update; the cache limit counts it as a shape). Not with several ranks: a warm-up step
    // all-reduces, so every rank must warm up the same shapes, and each measures its own memory.
    if (joining_->on() && !run_.group && joining_->memory().check(label).verdict == JoinedPassMemory::Verdict::Fits) {
      data::ShapeSignature joined = signatures[i];
      joined.batchSize *= gradAccum_;
      joined.microBatches = gradAccum_;
      const StepShape joinedShape = family_.stageWarmup(joined);
      if (auto s = executor_->prepare(joinedShape, true, [&] { return family_.stagedLoss(joinedShape); }))
        clock.add(std::to_string(gradAccum_) + " joined x " + label, *s), ++joinedShapes;
    }
  }
  if (joining_->on()) spdlog::info("warm-up: {} of these shapes captured joined too, as {} micro-batches in one pass", joinedShapes, gradAccum_);
  spdlog::info("graphs cover {:.1f}% of an epoch's batches", 100.0 * shareOfBatches(signatures, covered));
  if (regions_) takeRegionCaptures();  // counted in the warm-up above
}

torch::Tensor StepRunner::runMicroBatch(const data::Batch& batch, bool last, StepResult& result, WarmupClock& clock,
                                        const std::optional<StepShape>& staged) {
  torch::Tensor loss;
  if (staged_) {
    const StepShape shape = staged ? *staged : family_.stage(batch);
    MicroStepResult r = executor_->run(shape, last, [&] { return family_.stagedLoss(shape); });
    if (r.captureFailure) {
      const std::string message = "the training step for " + result.signature + " could not be captured and runs eagerly: " +
                                  *r.captureFailure;
      spdlog::warn("{}", message);
      run_.events.emit(events::Warning{message});
    }
    if (r.capturedSeconds) clock.add("captured " + result.signature, *r.capturedSeconds), result.captureSeconds += *r.capturedSeconds;
    loss = r.loss;
  } else {
    loss = executor_->runEager([&] { return family_.loss(batch, textEncodersTrain_); }, last, batch.microBatches);
  }
  if (regions_) {
    // Blocks seen with a new signature were captured within this micro-step.
    const double s = takeRegionCaptures();
    if (s > 0) clock.add("captured blocks for " + result.signature, s), result.captureSeconds += s;
  }
  return loss;
}

StepResult StepRunner::step(const std::function<data::Batch()>& nextBatch, long long batchesPerEpoch, WarmupClock& clock) {
  const bool firstStep = stepsRun_++ == 0;
  auto endsEpoch = [&](const data::Batch& b) { return b.indexInEpoch + 1 == batchesPerEpoch; };
  StepResult result;
  // Where micro-batches may join, the step's are pulled first (up to the end of their epoch) to see
  // whether they do; they run one after another otherwise, in the same order.
  std::vector<data::Batch> ahead;
  if (joining_->on()) {
    do {
      ahead.push_back(nextBatch());
    } while (static_cast<int>(ahead.size()) < gradAccum_ && !endsEpoch(ahead.back()));
    if (std::optional<data::Batch> joined = joining_->join(ahead, firstStep)) {
      result.epoch = joined->epoch;
      result.epochEnds = endsEpoch(*joined);
      result.signature = std::to_string(gradAccum_) + " joined x " + batchSignatureLabel(ahead.front().lossWeights.size(0), joined->bucket);
      // Where the run replays whole-step graphs, a joined pass needs its own: without one (the cache
      // limit, a failed capture) the micro-batches replay theirs one after another instead.
      const bool graphed = staged_ && run_.compile.captureSteps && run_.device.is_cuda();
      const std::optional<StepShape> shape = graphed ? std::optional<StepShape>(family_.stage(*joined)) : std::nullopt;
      if (!graphed || executor_->replays(*shape, true)) {
        result.loss = runMicroBatch(*joined, true, result, clock, shape);
        joining_->stepRan(true);
        return result;
      }
      joining_->logOnce("graphs", "the joined pass of " + result.signature +
                                      " has no captured graph (compile_cache_size_limit, or its capture failed): its micro-batches run "
                                      "one after another, replayed");
      result = StepResult{};
    }
  }
  // One micro-batch after another. On a GPU a step whose micro-batches ran eagerly (or were captured
  // now) measures their memory for the joined passes (a replayed graph allocates nothing).
  const bool measures = joining_->on() && joining_->memory().measures();
  const int64_t allocatedBefore = measures ? joining_->memory().allocatedNow() : 0;
  const long long replayedBefore = executor_->replayedMicroSteps(), regionReplaysBefore = regionReplays();
  long long capturedMicroSteps = 0;
  std::vector<std::string> labels;
  size_t taken = 0;
  int micro = 0;
  do {
    data::Batch batch = taken < ahead.size() ? std::move(ahead[taken++]) : nextBatch();
    result.epoch = batch.epoch;
    result.signature = batchSignatureLabel(batch.lossWeights.size(0), batch.bucket);
    result.epochEnds = endsEpoch(batch);
    const bool last = micro + 1 == gradAccum_ || result.epochEnds;
    const double capturedBefore = result.captureSeconds;
    const torch::Tensor loss = runMicroBatch(batch, last, result, clock);
    capturedMicroSteps += result.captureSeconds > capturedBefore && staged_;
    labels.push_back(result.signature);
    result.loss = result.loss.defined() ? result.loss + loss : loss;
    ++micro;
  } while (micro < gradAccum_ && !result.epochEnds);
  result.loss = result.loss / micro;
  if (measures && executor_->replayedMicroSteps() - replayedBefore <= capturedMicroSteps && regionReplays() == regionReplaysBefore)
    joining_->memory().measured(labels, allocatedBefore);
  if (joining_->on()) joining_->stepRan(false);
  return result;
}

void StepRunner::logHowStepsRan() const {
  if (joining_->on()) spdlog::info("{}", joining_->summary());
  if (!captures()) return;
  const GraphedRegions* regions = regions_ ? &*regions_ : nullptr;
  spdlog::info("CUDA graphs: {:.1f}% of the {} replayed", 100.0 * replayedShare(*executor_, regions),
               regions ? "block passes" : "micro-batches");
  if (regions && regions->inferenceReplays() > 0)
    spdlog::info("sample images replayed {} block passes from the training graphs", regions->inferenceReplays());
}

}  // namespace sinter::train

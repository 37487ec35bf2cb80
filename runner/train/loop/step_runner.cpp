#include "train/loop/step_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "compile/gemm_tuning.h"
#include "models/layers/linear.h"
#include "train/base/shape_plan.h"
#include "train/loop/stop_request.h"
#include "train/optim/fused_backward.h"
#include "train/optim/make_optimizer.h"
#include "train/optim/optimizer_update.h"
#include "train/parts/family_registration.h"

namespace sinter::train {

namespace {

// "2x1024x768": batch size and bucket, as the log and the warm-up events name a batch shape.
std::string signatureLabel(long long batchSize, const data::Resolution& bucket) {
  return std::to_string(batchSize) + "x" + data::toString(bucket);
}

}  // namespace

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
  if (run.compile.captureRegions) {
    regions_.emplace(run.device, run.compile.cacheLimit, generators_);
    family.captureRegions(&*regions_);
    // Sample images replay the blocks' training graphs where the shapes fit, unless LoRA dropout
    // (which those graphs apply) is on.
    bool dropout = false;
    for (const TrainableModel& m : family.trainableModels()) dropout |= m.module && models::anyLoraDropout(*m.module);
    regions_->reuseForInference(!dropout);
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

void StepRunner::warmUp(bool textEncodersTrain, const data::BatchPlan& plan, WarmupClock& clock) {
  textEncodersTrain_ = textEncodersTrain;
  // max-autotune: GEMMs are tuned when they first run, which is the warm-up (before any capture).
  if (run_.compile.tuneGemms) spdlog::info("{}", compile::enableGemmTuning(compile::defaultGemmTuningFile()));
  staged_ = captures() && (!textEncodersTrain || !stagedTextEncodersFor(run_.config).empty());
  if (captures() && run_.compile.precapture && !staged_)
    spdlog::info("warm-up: the blocks are captured when first seen (the text encoders train, so no batch is staged ahead)");
  if (!staged_ || !run_.compile.precapture) return;
  // A step ends its accumulation on its last micro-batch: graphs with and without the update.
  const std::vector<bool> lastMicroBatch = gradAccum_ == 1 ? std::vector<bool>{true} : std::vector<bool>{false, true};
  const auto& signatures = plan.shapeSignatures();
  const size_t captured = std::min(signatures.size(), static_cast<size_t>(run_.compile.cacheLimit));
  spdlog::info("warm-up: capturing {} for {} of {} batch shapes", run_.compile.captureSteps ? "the training step" : "the blocks",
               captured, signatures.size());
  for (size_t i = 0; i < captured; ++i) {
    const StepShape shape = family_.stageWarmup(signatures[i]);
    double seconds = 0;
    for (bool last : lastMicroBatch)
      if (auto s = executor_->prepare(shape, last, [&] { return family_.stagedLoss(shape); })) seconds += *s;
    clock.add(signatureLabel(signatures[i].batchSize, data::Resolution{signatures[i].width, signatures[i].height}), seconds);
  }
  spdlog::info("graphs cover {:.1f}% of an epoch's batches", 100.0 * shareOfBatches(signatures, captured));
  if (regions_) takeRegionCaptures();  // counted in the warm-up above
}

StepResult StepRunner::step(const std::function<data::Batch()>& nextBatch, long long batchesPerEpoch, WarmupClock& clock) {
  StepResult result;
  int micro = 0;
  do {
    data::Batch batch = nextBatch();
    result.epoch = batch.epoch;
    result.signature = signatureLabel(batch.lossWeights.size(0), batch.bucket);
    result.epochEnds = batch.indexInEpoch + 1 == batchesPerEpoch;
    const bool last = micro + 1 == gradAccum_ || result.epochEnds;
    torch::Tensor loss;
    if (staged_) {
      const StepShape shape = family_.stage(batch);
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
      loss = executor_->runEager([&] { return family_.loss(batch, textEncodersTrain_); }, last);
    }
    if (regions_) {
      // Blocks seen with a new signature were captured within this micro-step.
      const double s = takeRegionCaptures();
      if (s > 0) clock.add("captured blocks for " + result.signature, s), result.captureSeconds += s;
    }
    result.loss = result.loss.defined() ? result.loss + loss : loss;
    ++micro;
  } while (micro < gradAccum_ && !result.epochEnds);
  result.loss = result.loss / micro;
  return result;
}

void StepRunner::logReplays() const {
  if (!captures()) return;
  const GraphedRegions* regions = regions_ ? &*regions_ : nullptr;
  spdlog::info("CUDA graphs: {:.1f}% of the {} replayed", 100.0 * replayedShare(*executor_, regions),
               regions ? "block passes" : "micro-batches");
  if (regions && regions->inferenceReplays() > 0)
    spdlog::info("sample images replayed {} block passes from the training graphs", regions->inferenceReplays());
}

}  // namespace sinter::train

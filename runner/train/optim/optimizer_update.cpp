#include "train/optim/optimizer_update.h"

#include <stdexcept>

#include "kernels/stream_capture.h"
#include "train/optim/grad_clip.h"

namespace sinter::train {

distributed::GradientCommunication ddpCommunication(const Config& config) {
  const std::string value = config.getString("ddp_comm_hook");
  if (const auto c = distributed::gradientCommunicationNamed(value)) return *c;
  throw std::invalid_argument("ddp_comm_hook = \"" + value + "\": the values are \"no\", \"fp16\" and \"bf16\"");
}

OptimizerUpdate::OptimizerUpdate(Optimizer& optimizer, const LrSchedule& schedule, double maxGradNorm, bool lossScaling,
                                 torch::Device device, ComputeCopies* copies, bool fusedBackwardPass)
    : optimizer_(optimizer), schedule_(schedule), maxGradNorm_(maxGradNorm), copies_(copies), params_(optimizer.parameters()) {
  if (lossScaling) scaler_.emplace(device);
  schedule_.prepare(optimizer.device());  // its table is on the device before anything is captured
  if (fusedBackwardPass) {
    // The parameters are stepped where autograd writes their gradients: nothing between (no
    // unscaling, no compute copies) could see them.
    if (lossScaling || copies) throw std::invalid_argument("fused_backward_pass needs full_bf16 or full_fp16 weights");
    fused_ = std::make_unique<FusedBackwardPass>(optimizer, maxGradNorm);
  }
}

void OptimizerUpdate::averageGradientsAcross(distributed::ProcessGroup& group, distributed::GradientCommunication communication,
                                             bool overlapWithBackward) {
  group.broadcastFromRankZero(params_);
  if (fused_) {
    if (communication != distributed::GradientCommunication::Native)
      throw std::invalid_argument("ddp_comm_hook = \"" + distributed::gradientCommunicationName(communication) +
                                  "\" does not go with fused_backward_pass, whose gradients are all-reduced one by one as they are "
                                  "stepped: set ddp_comm_hook = \"no\"");
    fused_->reduceGradientsWith(&group);
    return;
  }
  if (copies_) {
    // Mixed precision: the buckets are ranges of the masters' flat gradients, filled from the
    // copies' as backward writes them.
    const distributed::CompactGradients compact{copies_->masters(), copies_->copies(), copies_->masterGradients(),
                                                copies_->copyGradients()};
    reducer_ = std::make_unique<distributed::GradientReducer>(group, params_, &compact, communication);
  } else {
    reducer_ = std::make_unique<distributed::GradientReducer>(group, params_, nullptr, communication);
  }
  reducer_->setOverlapWithBackward(overlapWithBackward);
}

std::string OptimizerUpdate::describeAveraging() const {
  if (reducer_) return reducer_->describe();
  return fused_ ? "each gradient all-reduced before its fused step" : "one process: nothing to average";
}

void OptimizerUpdate::beginMicroStep(bool lastOfStep) {
  if (copies_) copies_->refresh();
  lastOfStep_ = lastOfStep;
}

void OptimizerUpdate::backward(const torch::Tensor& loss, double lossDivisor) {
  if (fused_) {
    // The step's learning rate and count first: the backward pass applies it.
    applySchedule();
    optimizer_.advanceStep();
  }
  torch::Tensor scaled = loss / lossDivisor;
  if (scaler_) scaled = scaler_->scale(scaled);
  // The step's last backward pass with several ranks: the reducer collects the copies' gradients
  // bucket by bucket as they complete.
  if (reducer_) reducer_->beginBackward(lastOfStep_);
  const bool reducerCollects = reducer_ && reducer_->collectsCompactGradients();
  scaled.backward();
  if (copies_ && !reducerCollects) copies_->collectGradients();
}

void OptimizerUpdate::applySchedule() {
  schedule_.apply(optimizer_);
  if (!warmupAtZeroLearningRate_ || kernels::capturingOnCurrentStream(optimizer_.device())) return;
  torch::NoGradGuard noGrad;
  for (size_t g = 0; g < optimizer_.groupCount(); ++g) optimizer_.lr(g).zero_();
}

OptimizerUpdate::WarmupUndo OptimizerUpdate::warmupUndo(bool atStepBoundary, bool lastOfStep) const {
  WarmupUndo undo;
  // Only the optimizer's step writes the parameters (derived weights and loss scaling write their
  // own tensors; a skipped fp16 step keeps the parameters by selection), and afterStep_ after it.
  // Micro-steps that do not end a step run no optimizer step, except under a fused backward pass.
  const bool steps = lastOfStep || fused_;
  undo.zeroLearningRate = steps && optimizer_.zeroLearningRateKeepsParameters() && !afterStep_;
  const bool parametersUnchanged = !steps || undo.zeroLearningRate;
  if (parametersUnchanged) undo.unchanged = optimizer_.parameters();
  // The compute copies are left out: each micro-step refreshes them from the masters, and their
  // gradients are zero between micro-steps (collectGradients).
  undo.copied = optimizer_.mutableTensors(/*withGradients=*/!atStepBoundary, /*withParameters=*/!parametersUnchanged);
  if (scaler_)
    for (const torch::Tensor& t : scaler_->mutableTensors()) undo.copied.push_back(t);
  if (derived_.mutableTensors)
    for (const torch::Tensor& t : derived_.mutableTensors()) undo.copied.push_back(t);
  undo.reset = [this, atStepBoundary] {
    torch::NoGradGuard noGrad;
    if (atStepBoundary) optimizer_.zeroGrad();
    if (copies_) {
      copies_->copyGradients().zero_();
      copies_->refresh();  // the weights the model reads (samples, validation) are the masters' again
    }
  };
  return undo;
}

void OptimizerUpdate::apply() {
  if (fused_) {
    // Every parameter has stepped within backward() by now.
    if (afterStep_) afterStep_();
    return;
  }
  if (derived_.backpropagate) derived_.backpropagate();
  if (reducer_) reducer_->finish();
  applySchedule();
  if (scaler_) {
    // fp16: unscale, and skip the update on the device when a gradient overflowed.
    torch::Tensor foundInf = scaler_->unscale(params_);
    clipGradNorm(params_, maxGradNorm_);
    optimizer_.step(foundInf);
    scaler_->update(foundInf);
  } else {
    clipGradNorm(params_, maxGradNorm_);
    optimizer_.step();
  }
  if (afterStep_) afterStep_();
  if (derived_.refresh) derived_.refresh();
  optimizer_.zeroGrad();
}

}  // namespace sinter::train

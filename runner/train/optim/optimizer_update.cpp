#include "train/optim/optimizer_update.h"

#include <stdexcept>

#include "train/optim/grad_clip.h"

namespace sinter::train {

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

void OptimizerUpdate::averageGradientsAcross(distributed::ProcessGroup& group) {
  group.broadcastFromRankZero(params_);
  if (fused_) fused_->reduceGradientsWith(&group);
  else reducer_ = std::make_unique<distributed::GradientReducer>(group, params_);
}

std::string OptimizerUpdate::describeAveraging() const {
  if (reducer_) return std::to_string(reducer_->bucketCount()) + " gradient buckets all-reduced as backward completes them";
  return fused_ ? "each gradient all-reduced before its fused step" : "one process: nothing to average";
}

void OptimizerUpdate::beginMicroStep(bool lastOfStep) {
  if (copies_) copies_->refresh();
  if (reducer_) reducer_->beginBackward(lastOfStep);
}

void OptimizerUpdate::backward(const torch::Tensor& loss, double lossDivisor) {
  if (fused_) {
    // The step's learning rate and count first: the backward pass applies it.
    schedule_.apply(optimizer_);
    optimizer_.advanceStep();
  }
  torch::Tensor scaled = loss / lossDivisor;
  if (scaler_) scaled = scaler_->scale(scaled);
  scaled.backward();
  if (copies_) copies_->collectGradients();
}

std::vector<torch::Tensor> OptimizerUpdate::mutableTensors() const {
  std::vector<torch::Tensor> all = optimizer_.mutableTensors();
  if (scaler_)
    for (const torch::Tensor& t : scaler_->mutableTensors()) all.push_back(t);
  if (copies_)
    for (const torch::Tensor& t : copies_->mutableTensors()) all.push_back(t);
  if (derived_.mutableTensors)
    for (const torch::Tensor& t : derived_.mutableTensors()) all.push_back(t);
  return all;
}

void OptimizerUpdate::apply() {
  if (fused_) {
    // Every parameter has stepped within backward() by now.
    if (afterStep_) afterStep_();
    return;
  }
  if (derived_.backpropagate) derived_.backpropagate();
  if (reducer_) reducer_->finish();
  schedule_.apply(optimizer_);
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

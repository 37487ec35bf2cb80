#include "train/optimizer_update.h"

#include "train/grad_clip.h"

namespace sinter::train {

OptimizerUpdate::OptimizerUpdate(AdamW& optimizer, const LrSchedule& schedule, double maxGradNorm, bool lossScaling,
                                 torch::Device device, ComputeCopies* copies)
    : optimizer_(optimizer), schedule_(schedule), maxGradNorm_(maxGradNorm), copies_(copies), params_(optimizer.parameters()) {
  if (lossScaling) scaler_.emplace(device);
}

void OptimizerUpdate::beginMicroStep() {
  if (copies_) copies_->refresh();
}

void OptimizerUpdate::backward(const torch::Tensor& loss, double lossDivisor) {
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
  return all;
}

void OptimizerUpdate::apply() {
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
  optimizer_.zeroGrad();
}

}  // namespace sinter::train

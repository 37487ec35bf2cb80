#pragma once
// What follows a step's micro-batches, for every family and method: the loss scaled for the
// backward pass (fp16), then unscaling, gradient clipping, the learning-rate schedule, AdamW and
// zeroing the gradients, all on the device with no host read (so a graph can capture it).
#include <torch/torch.h>

#include <optional>

#include "train/adamw.h"
#include "train/lr_schedule.h"
#include "train/mixed_precision.h"

namespace sinter::train {

class OptimizerUpdate {
 public:
  OptimizerUpdate(AdamW& optimizer, const LrSchedule& schedule, double maxGradNorm, bool lossScaling, torch::Device device);

  // Backward of one micro-batch's loss (divided over the accumulation, scaled under fp16);
  // gradients add up in the optimizer's persistent buffers.
  void backward(const torch::Tensor& loss, double lossDivisor);
  // Unscale, clip, schedule, step, zero.
  void apply();
  // Every tensor backward() and apply() change (the optimizer's and the loss scaler's).
  std::vector<torch::Tensor> mutableTensors() const;

 private:
  AdamW& optimizer_;
  const LrSchedule& schedule_;
  double maxGradNorm_;
  std::optional<LossScaler> scaler_;
  std::vector<torch::Tensor> params_;  // the fixed list the step works on
};

}  // namespace sinter::train

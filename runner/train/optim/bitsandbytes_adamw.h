#pragma once
// bitsandbytes' AdamW (AdamW8bit, PagedAdamW8bit, PagedAdamW, PagedAdamW32bit) as its CUDA kernels
// compute it (kOptimizer32bit2State, kOptimizerStatic8bit2StateBlockwise, "adam"):
//   m = m * beta1 + (1 - beta1) * g;  v = v * beta2 + (1 - beta2) * g^2
//   p = p - lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps * sqrt(1 - beta2^t))
//   p = p * (1 - lr * weight_decay)      (after the update, where torch's AdamW decays before)
// The 8-bit kinds keep m and v as blockwise 8-bit states (m signed, v unsigned) for parameters of
// at least min_8bit_size elements; the update reads the dequantized states updated in float32,
// which are then quantized again. The learning rates and the step count are device tensors.
#include <optional>
#include <vector>

#include "train/optim/elementwise_optimizer.h"
#include "train/optim/optimizer_args.h"

namespace sinter::train {

class BitsAndBytesAdamW : public ElementwiseOptimizer {
 public:
  // min8bitSize: parameters of at least this many elements keep 8-bit states; nullopt: all 32-bit.
  BitsAndBytesAdamW(std::vector<OptimizerGroup> groups, AdamWHyperparameters hyper, std::optional<long long> min8bitSize);
  // p <- (p - lr * c2 / c1 * m / (sqrt(v) + c2 * eps)) * (1 - lr * wd): at lr 0 each parameter moves by +-0.
  bool zeroLearningRateKeepsParameters() const override { return true; }

 protected:
  void beginStep() override;
  void update(size_t group, size_t index) override;

 private:
  AdamWHyperparameters hyper_;
  size_t expAvg_ = 0, expAvgSq_ = 0;
  std::vector<torch::Tensor> stepSizes_, decays_;  // per group, for the current step
  torch::Tensor epsilon_;                          // eps * sqrt(1 - beta2^t)
};

}  // namespace sinter::train

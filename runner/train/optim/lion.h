#pragma once
// Lion (lion_pytorch.Lion; bitsandbytes' Lion8bit and PagedLion8bit), its update the sign of an
// interpolation of the momentum and the gradient:
//   p = p * (1 - lr * weight_decay)
//   p = p - lr * sign(beta1 * m + (1 - beta1) * g)
//   m = beta2 * m + (1 - beta2) * g
// The 8-bit kinds keep m as a blockwise 8-bit state (signed map) for parameters of at least
// min_8bit_size elements. The learning rates and the step count are device tensors.
#include <optional>
#include <vector>

#include "train/optim/elementwise_optimizer.h"
#include "train/optim/optimizer_args.h"

namespace sinter::train {

class Lion : public ElementwiseOptimizer {
 public:
  // min8bitSize: parameters of at least this many elements keep an 8-bit state; nullopt: all 32-bit.
  Lion(std::vector<OptimizerGroup> groups, LionHyperparameters hyper, std::optional<long long> min8bitSize);
  // p <- p * (1 - lr * wd) - lr * sign(...): at lr 0 each parameter moves by +-0.
  bool zeroLearningRateKeepsParameters() const override { return true; }

 protected:
  void beginStep() override;
  void update(size_t group, size_t index) override;

 private:
  LionHyperparameters hyper_;
  size_t expAvg_ = 0;
  std::vector<torch::Tensor> decays_;  // per group, for the current step
};

}  // namespace sinter::train

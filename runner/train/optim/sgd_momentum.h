#pragma once
// SGD with momentum: torch.optim.SGD with nesterov=True (sd-scripts' SGDNesterov), or bitsandbytes'
// SGD8bit (SGDNesterov8bit), which takes nesterov=True from sd-scripts and never reads it: its
// "momentum" kernels step by the momentum buffer itself (heavy ball), with the buffer kept as a
// blockwise 8-bit state (signed map) for parameters of at least min_8bit_size elements.
//   g = g + weight_decay * p;  b = momentum * b + g
//   p = p - lr * (g + momentum * b)   (Nesterov)   or   p = p - lr * b   (heavy ball)
// Dampening is 0 (torch refuses another with Nesterov; bitsandbytes ignores it). The learning
// rates and the step count are device tensors.
#include <optional>
#include <vector>

#include "train/optim/elementwise_optimizer.h"
#include "train/optim/optimizer_args.h"

namespace sinter::train {

class SgdMomentum : public ElementwiseOptimizer {
 public:
  // min8bitSize: parameters of at least this many elements keep an 8-bit buffer; nullopt: all 32-bit.
  SgdMomentum(std::vector<OptimizerGroup> groups, SgdHyperparameters hyper, bool nesterov, std::optional<long long> min8bitSize);
  // p <- p - lr * direction (weight decay is inside the direction): at lr 0 each parameter moves by +-0.
  bool zeroLearningRateKeepsParameters() const override { return true; }

 protected:
  void update(size_t group, size_t index) override;

 private:
  SgdHyperparameters hyper_;
  bool nesterov_;
  size_t buffer_ = 0;
};

}  // namespace sinter::train

#pragma once
// Prodigy (prodigyopt.Prodigy, konstmish/prodigy): Adam whose step size d*lr is estimated from how
// far the weights have moved from where they started (p0) along the gradients, against the
// running sum s of the gradients; d only grows (at most by growth_rate per step). Moments are
// scaled by d and d^2, decoupled weight decay by default, bias correction and safeguard_warmup
// optional, and slice_p estimates from every slice_p-th entry (p0 and s that much smaller).
#include <torch/torch.h>

#include <vector>

#include "train/optim/dadaptation_args.h"
#include "train/optim/dadaptation_optimizer.h"

namespace sinter::train {

class Prodigy : public DAdaptationOptimizer {
 public:
  Prodigy(std::vector<OptimizerGroup> groups, DAdaptationHyperparameters hyper);

 protected:
  void update(const torch::Tensor& on) override;
  std::vector<StateKind*> stateKinds() override { return {&expAvg_, &expAvgSq_, &s_, &p0_}; }
  std::vector<std::pair<std::string, torch::Tensor*>> globalStates() override {
    return {{"d", &d_}, {"d_max", &dMax_}, {"d_numerator", &dNumerator_}, {"k", &k_}};
  }

 private:
  // The entries the estimate uses: every slice_p-th of the flattened tensor.
  torch::Tensor sliced(const torch::Tensor& t) const;
  DAdaptationHyperparameters hyper_;
  // exp_avg is absent with beta1 = 0. p0 is the weights at the start, in full even where they are
  // all zero (prodigyopt keeps a 0-dim zero there: the same arithmetic, and a state whose shape
  // does not change with the values).
  StateKind expAvg_{"exp_avg", {}}, expAvgSq_{"exp_avg_sq", {}}, s_{"s", {}}, p0_{"p0", {}};
  torch::Tensor dMax_, dNumerator_, k_;  // 0-dim float64; k counts the steps that updated d
};

}  // namespace sinter::train

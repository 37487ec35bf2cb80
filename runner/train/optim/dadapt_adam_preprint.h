#pragma once
// DAdaptAdamPreprint (dadaptation.experimental.DAdaptAdamPreprint), what sd-scripts' "DAdaptation"
// builds: the D-Adaptation paper's Adam, whose estimate of d weighs s and the gradients by the
// second moment (the sums of s^2/denominator and g^2/denominator), without bias correction.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "train/optim/dadaptation_args.h"
#include "train/optim/dadaptation_optimizer.h"

namespace sinter::train {

class DAdaptAdamPreprint : public DAdaptationOptimizer {
 public:
  // name: "DAdaptation" or "DAdaptAdamPreprint", as optimizer_type named it.
  DAdaptAdamPreprint(std::vector<OptimizerGroup> groups, DAdaptationHyperparameters hyper, std::string name = "DAdaptAdamPreprint");

 protected:
  void update(const torch::Tensor& on) override;
  std::vector<StateKind*> stateKinds() override { return {&expAvg_, &expAvgSq_, &s_}; }
  std::vector<std::pair<std::string, torch::Tensor*>> globalStates() override { return {{"d", &d_}, {"gsq_weighted", &gsqWeighted_}}; }

 private:
  DAdaptationHyperparameters hyper_;
  StateKind expAvg_{"exp_avg", {}}, expAvgSq_{"exp_avg_sq", {}}, s_{"s", {}};
  torch::Tensor gsqWeighted_;  // 0-dim float64
};

}  // namespace sinter::train

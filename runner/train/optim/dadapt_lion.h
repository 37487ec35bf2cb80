#pragma once
// DAdaptLion (dadaptation.DAdaptLion, facebookresearch/dadaptation): Lion (the sign of an
// interpolation of momentum and gradient, decoupled weight decay) whose step size d*lr is
// D-Adaptation's estimate from the inner products of the updates with their running sum s.
#include <torch/torch.h>

#include <vector>

#include "train/optim/dadaptation_args.h"
#include "train/optim/dadaptation_optimizer.h"

namespace sinter::train {

class DAdaptLion : public DAdaptationOptimizer {
 public:
  DAdaptLion(std::vector<OptimizerGroup> groups, DAdaptationHyperparameters hyper);

 protected:
  void update(const torch::Tensor& on) override;
  std::vector<StateKind*> stateKinds() override { return {&expAvg_, &s_}; }
  std::vector<std::pair<std::string, torch::Tensor*>> globalStates() override {
    return {{"d", &d_}, {"numerator_weighted", &numeratorWeighted_}};
  }

 private:
  DAdaptationHyperparameters hyper_;
  StateKind expAvg_{"exp_avg", {}}, s_{"s", {}};
  torch::Tensor numeratorWeighted_;  // 0-dim float64
};

}  // namespace sinter::train

#pragma once
// DAdaptAdam (dadaptation.DAdaptAdam, facebookresearch/dadaptation): Adam whose step size d*lr is
// D-Adaptation's lower bound on the distance to the solution, from a weighted sum of the
// gradients s and the inner products of the gradients with it; d only grows (at most by
// growth_rate per step). The first moment carries d*lr, bias correction is optional, weight decay
// coupled unless decouple.
#include <torch/torch.h>

#include <vector>

#include "train/optim/dadaptation_args.h"
#include "train/optim/dadaptation_optimizer.h"

namespace sinter::train {

class DAdaptAdam : public DAdaptationOptimizer {
 public:
  DAdaptAdam(std::vector<OptimizerGroup> groups, DAdaptationHyperparameters hyper);

 protected:
  void update(const torch::Tensor& on) override;
  std::vector<StateKind*> stateKinds() override { return {&expAvg_, &expAvgSq_, &s_}; }
  std::vector<std::pair<std::string, torch::Tensor*>> globalStates() override {
    return {{"d", &d_}, {"numerator_weighted", &numeratorWeighted_}, {"k", &k_}};
  }

 private:
  DAdaptationHyperparameters hyper_;
  StateKind expAvg_{"exp_avg", {}}, expAvgSq_{"exp_avg_sq", {}}, s_{"s", {}};
  torch::Tensor numeratorWeighted_, k_;  // 0-dim float64; k counts the steps that updated d
};

}  // namespace sinter::train

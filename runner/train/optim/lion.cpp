#include "train/optim/lion.h"

namespace sinter::train {

Lion::Lion(std::vector<OptimizerGroup> groups, LionHyperparameters hyper, std::optional<long long> min8bitSize)
    : ElementwiseOptimizer(std::move(groups), min8bitSize), hyper_(hyper) {
  expAvg_ = addState("exp_avg", /*isSigned=*/true);
}

void Lion::beginStep() {
  decays_.clear();
  for (const torch::Tensor& lr : lrs_) decays_.push_back(1.0 - lr * hyper_.weightDecay);
}

void Lion::update(size_t g, size_t i) {
  const torch::Tensor grad = working(g, i, groups_[g].params[i].grad());
  const torch::Tensor m = state(expAvg_, g, i);
  torch::Tensor p = working(g, i, groups_[g].params[i]);
  if (hyper_.weightDecay != 0) p = p * decays_[g];
  const torch::Tensor direction = (m * hyper_.beta1 + grad * (1.0 - hyper_.beta1)).sign();
  p = p - direction * lrs_[g];
  setParameter(g, i, p);
  setState(expAvg_, g, i, m * hyper_.beta2 + grad * (1.0 - hyper_.beta2));
}

}  // namespace sinter::train

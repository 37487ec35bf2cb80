#include "train/optim/bitsandbytes_adamw.h"

namespace sinter::train {

BitsAndBytesAdamW::BitsAndBytesAdamW(std::vector<OptimizerGroup> groups, AdamWHyperparameters hyper,
                                     std::optional<long long> min8bitSize)
    : ElementwiseOptimizer(std::move(groups), min8bitSize), hyper_(hyper) {
  expAvg_ = addState("exp_avg", /*isSigned=*/true);
  expAvgSq_ = addState("exp_avg_sq", /*isSigned=*/false);
}

void BitsAndBytesAdamW::beginStep() {
  // From the device step count, as the kernels compute them per launch.
  const torch::Tensor correction1 = 1.0 - torch::pow(torch::full({}, hyper_.beta1, step_.options()), step_);
  const torch::Tensor correction2 = (1.0 - torch::pow(torch::full({}, hyper_.beta2, step_.options()), step_)).sqrt();
  epsilon_ = correction2 * hyper_.eps;
  stepSizes_.clear();
  decays_.clear();
  for (const torch::Tensor& lr : lrs_) {
    stepSizes_.push_back(-lr * correction2 / correction1);
    decays_.push_back(1.0 - lr * hyper_.weightDecay);
  }
}

void BitsAndBytesAdamW::update(size_t g, size_t i) {
  const torch::Tensor grad = working(g, i, groups_[g].params[i].grad());
  const torch::Tensor m = state(expAvg_, g, i) * hyper_.beta1 + grad * (1.0 - hyper_.beta1);
  const torch::Tensor v = state(expAvgSq_, g, i) * hyper_.beta2 + grad * grad * (1.0 - hyper_.beta2);
  torch::Tensor p = working(g, i, groups_[g].params[i]) + stepSizes_[g] * (m / (v.sqrt() + epsilon_));
  if (hyper_.weightDecay > 0) p = p * decays_[g];
  setParameter(g, i, p);
  setState(expAvg_, g, i, m);
  setState(expAvgSq_, g, i, v);
}

}  // namespace sinter::train

#include "train/optim/sgd_momentum.h"

namespace sinter::train {

SgdMomentum::SgdMomentum(std::vector<OptimizerGroup> groups, SgdHyperparameters hyper, bool nesterov,
                         std::optional<long long> min8bitSize)
    : ElementwiseOptimizer(std::move(groups), min8bitSize), hyper_(hyper), nesterov_(nesterov) {
  buffer_ = addState("momentum_buffer", /*isSigned=*/true);
}

void SgdMomentum::update(size_t g, size_t i) {
  torch::Tensor grad = working(g, i, groups_[g].params[i].grad());
  const torch::Tensor p = working(g, i, groups_[g].params[i]);
  if (hyper_.weightDecay != 0) grad = grad + p * hyper_.weightDecay;
  // The buffer starts at zero: its first value is the gradient itself, as torch's clone and
  // bitsandbytes' "if step == 1" give.
  const torch::Tensor buffer = state(buffer_, g, i) * hyper_.momentum + grad;
  const torch::Tensor direction = nesterov_ ? grad + buffer * hyper_.momentum : buffer;
  setParameter(g, i, p - direction * lrs_[g]);
  setState(buffer_, g, i, buffer);
}

}  // namespace sinter::train

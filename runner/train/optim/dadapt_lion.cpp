#include "train/optim/dadapt_lion.h"

#include <cmath>

namespace sinter::train {

DAdaptLion::DAdaptLion(std::vector<OptimizerGroup> groups, DAdaptationHyperparameters hyper)
    : DAdaptationOptimizer("DAdaptLion", std::move(groups), hyper.d0), hyper_(hyper) {
  zeroStates({&expAvg_, &s_});
  numeratorWeighted_ = scalar(0.0);
}

void DAdaptLion::update(const torch::Tensor& on) {
  const DAdaptationHyperparameters& h = hyper_;
  const double sqrtBeta2 = std::sqrt(h.beta2);
  const torch::Tensor lr = largestLr();
  const torch::Tensor dlr = d_ * lr;

  // One pass over every parameter (DAdaptLion steps each as it goes, whatever its group's lr):
  // decay, the sign step with the d*lr of before the estimate, the momentum, and the sums.
  const torch::Tensor keep = (1.0 - dlr * h.weightDecay * on).to(torch::kFloat32);
  const torch::Tensor stepSize = (dlr * on).to(torch::kFloat32);
  const torch::Tensor beta2On = either(on, h.beta2, 1.0).to(torch::kFloat32), sqrtBeta2On = either(on, sqrtBeta2, 1.0).to(torch::kFloat32);
  const torch::Tensor mScale = ((1.0 - h.beta2) * dlr * on).to(torch::kFloat32);
  const torch::Tensor sScale = ((1.0 - sqrtBeta2) * dlr * on).to(torch::kFloat32);
  std::vector<torch::Tensor> dots, sNorms;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      torch::Tensor& p = groups_[g].params[i];
      if (!p.grad().defined()) continue;
      const torch::Tensor grad = float32(p.grad());
      torch::Tensor weights = p.detach();
      torch::Tensor &m = expAvg_.tensors[g][i], &s = s_.tensors[g][i];
      const torch::Tensor p32 = float32(weights), m32 = float32(m), s32 = float32(s);
      p32.mul_(keep);
      const torch::Tensor direction = (m32 * h.beta1).add_(grad, 1.0 - h.beta1).sign_();
      p32.sub_(direction * stepSize);
      m32.mul_(beta2On).add_(grad * mScale);
      dots.push_back(torch::dot(direction.flatten(), s32.flatten()));
      s32.mul_(sqrtBeta2On).add_(direction * sScale);
      sNorms.push_back(s32.abs().sum());
      storeBack(weights, p32);
      storeBack(m, m32);
      storeBack(s, s32);
    }

  // The estimate: kept where s is all zero (DAdaptLion returns before it), d only where lr > 0.
  const torch::Tensor skL1 = sum64(sNorms);
  const torch::Tensor progress = on * (skL1 > 0).to(torch::kFloat64);
  const torch::Tensor numerator = sqrtBeta2 * numeratorWeighted_ + (1.0 - sqrtBeta2) * dlr * sum64(dots);
  const torch::Tensor dHat = numerator / ((1.0 - sqrtBeta2) * skL1);
  commit(numeratorWeighted_, progress, numerator);
  commit(d_, progress * (lr > 0).to(torch::kFloat64), torch::maximum(d_, dHat));
}

}  // namespace sinter::train

#include "train/optim/dadapt_adam.h"

#include <cmath>

namespace sinter::train {

DAdaptAdam::DAdaptAdam(std::vector<OptimizerGroup> groups, DAdaptationHyperparameters hyper)
    : DAdaptationOptimizer("DAdaptAdam", std::move(groups), hyper.d0), hyper_(hyper) {
  zeroStates({&expAvg_, &expAvgSq_, &s_});
  numeratorWeighted_ = scalar(0.0);
  k_ = scalar(0.0);
}

void DAdaptAdam::update(const torch::Tensor& stepOn) {
  const DAdaptationHyperparameters& h = hyper_;
  const double sqrtBeta2 = std::sqrt(h.beta2);
  const torch::Tensor lr = largestLr();
  // With lr 0 every group is skipped and DAdaptAdam's step changes nothing.
  const torch::Tensor on = stepOn * (lr > 0).to(torch::kFloat64);
  const torch::Tensor biasCorrection = h.useBiasCorrection
                                           ? (1.0 - torch::pow(scalar(h.beta2), k_ + 1.0)).sqrt() / (1.0 - torch::pow(scalar(h.beta1), k_ + 1.0))
                                           : scalar(1.0);
  const torch::Tensor dlr = d_ * lr * biasCorrection;

  // First pass, over the groups that estimate: the inner product of the gradient with s (as it was),
  // then the moments and s, and s's l1 norm.
  const torch::Tensor beta1On = either(on, h.beta1, 1.0).to(torch::kFloat32), beta2On = either(on, h.beta2, 1.0).to(torch::kFloat32),
                      sqrtBeta2On = either(on, sqrtBeta2, 1.0).to(torch::kFloat32);
  const torch::Tensor mScale = (dlr * (1.0 - h.beta1) * on).to(torch::kFloat32);
  const torch::Tensor vScale = ((1.0 - h.beta2) * on).to(torch::kFloat32);
  const torch::Tensor sScale = (dlr * (1.0 - sqrtBeta2) * on).to(torch::kFloat32);
  std::vector<torch::Tensor> dots, sNorms;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      torch::Tensor& p = groups_[g].params[i];
      if (!p.grad().defined()) continue;
      // Coupled weight decay goes into the gradient itself, in every group, as DAdaptAdam adds it.
      if (h.weightDecay != 0 && !h.decouple) p.mutable_grad().add_(p.detach(), h.weightDecay);
      if (!estimates(g)) continue;
      const torch::Tensor grad = float32(p.grad());
      torch::Tensor &m = expAvg_.tensors[g][i], &v = expAvgSq_.tensors[g][i], &s = s_.tensors[g][i];
      const torch::Tensor m32 = float32(m), v32 = float32(v), s32 = float32(s);
      dots.push_back(torch::dot(grad.flatten(), (s32 / v32.sqrt().add_(h.eps)).flatten()));
      m32.mul_(beta1On).add_(grad * mScale);
      v32.mul_(beta2On).addcmul_(grad, grad * vScale);
      s32.mul_(sqrtBeta2On).add_(grad * sScale);
      storeBack(m, m32);
      storeBack(v, v32);
      storeBack(s, s32);
      sNorms.push_back(s32.abs().sum());
    }

  // The estimate. With s all zero DAdaptAdam returns before it: nothing after this point changes then.
  const torch::Tensor skL1 = sum64(sNorms);
  const torch::Tensor progress = on * (skL1 > 0).to(torch::kFloat64);
  const torch::Tensor numerator = sqrtBeta2 * numeratorWeighted_ + (1.0 - sqrtBeta2) * dlr * sum64(dots);
  const torch::Tensor dHat = numerator / ((1.0 - sqrtBeta2) * skL1);
  const torch::Tensor d = torch::maximum(d_, torch::minimum(dHat, d_ * h.growthRate));
  commit(numeratorWeighted_, progress, numerator);
  commit(d_, progress, d);
  commit(k_, progress, k_ + 1.0);

  // Second pass, over every parameter: decoupled decay with the d*lr of before the estimate, and
  // the first moment (which holds d*lr already) over the second's root.
  const torch::Tensor decay = (-h.weightDecay * dlr * progress).to(torch::kFloat32);
  const torch::Tensor applied = progress.to(torch::kFloat32);
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      torch::Tensor& p = groups_[g].params[i];
      if (!p.grad().defined()) continue;
      torch::Tensor weights = p.detach();
      const torch::Tensor p32 = float32(weights);
      const torch::Tensor denom = float32(expAvgSq_.tensors[g][i]).sqrt().add_(h.eps);
      if (h.weightDecay != 0 && h.decouple) p32.add_(p32 * decay);
      p32.sub_(float32(expAvg_.tensors[g][i]) / denom * applied);
      storeBack(weights, p32);
    }
}

}  // namespace sinter::train

#include "train/optim/dadapt_adam_preprint.h"

namespace sinter::train {

DAdaptAdamPreprint::DAdaptAdamPreprint(std::vector<OptimizerGroup> groups, DAdaptationHyperparameters hyper, std::string name)
    : DAdaptationOptimizer(std::move(name), std::move(groups), hyper.d0), hyper_(hyper) {
  zeroStates({&expAvg_, &expAvgSq_, &s_});
  gsqWeighted_ = scalar(0.0);
}

void DAdaptAdamPreprint::update(const torch::Tensor& stepOn) {
  const DAdaptationHyperparameters& h = hyper_;
  const torch::Tensor lr = largestLr();
  // With lr 0 every group is skipped and the step changes nothing.
  const torch::Tensor on = stepOn * (lr > 0).to(torch::kFloat64);
  const torch::Tensor dlr = d_ * lr;

  // First pass, over the groups that estimate: the moments and s, then the sums of g^2 and s^2 over
  // the new denominator and s's l1 norm.
  const torch::Tensor beta1On = either(on, h.beta1, 1.0).to(torch::kFloat32), beta2On = either(on, h.beta2, 1.0).to(torch::kFloat32);
  const torch::Tensor mScale = (dlr * (1.0 - h.beta1) * on).to(torch::kFloat32);
  const torch::Tensor vScale = ((1.0 - h.beta2) * on).to(torch::kFloat32);
  const torch::Tensor sScale = (dlr * (1.0 - h.beta2) * on).to(torch::kFloat32);
  std::vector<torch::Tensor> gradSquares, sSquares, sNorms;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      torch::Tensor& p = groups_[g].params[i];
      if (!p.grad().defined()) continue;
      // Coupled weight decay goes into the gradient itself, in every group, as the preprint's Adam adds it.
      if (h.weightDecay != 0 && !h.decouple) p.mutable_grad().add_(p.detach(), h.weightDecay);
      if (!estimates(g)) continue;
      const torch::Tensor grad = float32(p.grad());
      torch::Tensor &m = expAvg_.tensors[g][i], &v = expAvgSq_.tensors[g][i], &s = s_.tensors[g][i];
      const torch::Tensor m32 = float32(m), v32 = float32(v), s32 = float32(s);
      const torch::Tensor gradSquare = grad * grad;
      m32.mul_(beta1On).add_(grad * mScale);
      v32.mul_(beta2On).add_(gradSquare * vScale);
      const torch::Tensor denom = v32.sqrt().add_(h.eps);
      gradSquares.push_back((gradSquare / denom).sum());
      s32.mul_(beta2On).add_(grad * sScale);
      sSquares.push_back((s32 * s32 / denom).sum());
      sNorms.push_back(s32.abs().sum());
      storeBack(m, m32);
      storeBack(v, v32);
      storeBack(s, s32);
    }

  // The estimate. With s all zero the step returns before it: nothing after this point changes then.
  const torch::Tensor skL1 = sum64(sNorms);
  const torch::Tensor progress = on * (skL1 > 0).to(torch::kFloat64);
  const torch::Tensor gsqWeighted = h.beta2 * gsqWeighted_ + sum64(gradSquares) * dlr * dlr * (1.0 - h.beta2);
  const torch::Tensor dHat = (sum64(sSquares) / (1.0 - h.beta2) - gsqWeighted) / skL1;
  const torch::Tensor d = torch::maximum(d_, torch::minimum(dHat, d_ * h.growthRate));
  commit(gsqWeighted_, progress, gsqWeighted);
  commit(d_, progress, d);

  // Second pass, over every parameter: decoupled decay (in the groups that estimate) with the d*lr
  // of before the estimate, and the first moment (which holds d*lr) over the second's root.
  const torch::Tensor decay = (-h.weightDecay * dlr * progress).to(torch::kFloat32);
  const torch::Tensor applied = progress.to(torch::kFloat32);
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      torch::Tensor& p = groups_[g].params[i];
      if (!p.grad().defined()) continue;
      torch::Tensor weights = p.detach();
      const torch::Tensor p32 = float32(weights);
      const torch::Tensor denom = float32(expAvgSq_.tensors[g][i]).sqrt().add_(h.eps);
      if (h.weightDecay != 0 && h.decouple && estimates(g)) p32.add_(p32 * decay);
      p32.sub_(float32(expAvg_.tensors[g][i]) / denom * applied);
      storeBack(weights, p32);
    }
}

}  // namespace sinter::train

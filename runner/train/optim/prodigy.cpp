#include "train/optim/prodigy.h"

#include <cmath>

namespace sinter::train {

Prodigy::Prodigy(std::vector<OptimizerGroup> groups, DAdaptationHyperparameters hyper)
    : DAdaptationOptimizer("Prodigy", std::move(groups), hyper.d0), hyper_(hyper) {
  torch::NoGradGuard noGrad;
  for (const OptimizerGroup& g : groups_) {
    std::vector<torch::Tensor> m, v, s, p0;
    for (const torch::Tensor& p : g.params) {
      m.push_back(hyper_.beta1 > 0 ? torch::zeros_like(p, torch::MemoryFormat::Contiguous) : torch::Tensor());
      v.push_back(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
      p0.push_back(sliced(p.detach()).clone());
      s.push_back(torch::zeros_like(p0.back()));
    }
    expAvg_.tensors.push_back(std::move(m));
    expAvgSq_.tensors.push_back(std::move(v));
    s_.tensors.push_back(std::move(s));
    p0_.tensors.push_back(std::move(p0));
  }
  dMax_ = scalar(hyper_.d0);
  dNumerator_ = scalar(0.0);
  k_ = scalar(0.0);
}

torch::Tensor Prodigy::sliced(const torch::Tensor& t) const {
  const torch::Tensor flat = t.flatten();
  return hyper_.sliceP == 1 ? flat : flat.slice(0, 0, c10::nullopt, hyper_.sliceP);
}

void Prodigy::update(const torch::Tensor& stepOn) {
  const DAdaptationHyperparameters& h = hyper_;
  const double beta3 = h.beta3.value_or(std::sqrt(h.beta2));
  const torch::Tensor lr = largestLr();
  // With lr 0 every group is skipped and prodigyopt's step changes nothing.
  const torch::Tensor on = stepOn * (lr > 0).to(torch::kFloat64);
  const torch::Tensor biasCorrection = h.useBiasCorrection
                                           ? (1.0 - torch::pow(scalar(h.beta2), k_ + 1.0)).sqrt() / (1.0 - torch::pow(scalar(h.beta1), k_ + 1.0))
                                           : scalar(1.0);
  const torch::Tensor dlr = d_ * lr * biasCorrection;
  const torch::Tensor dOverD0 = d_ / h.d0;  // prodigyopt's scaling, so that the sums do not get tiny

  // First pass, over the groups that estimate: the moments, s, and the sums d comes from.
  const torch::Tensor beta1On = either(on, h.beta1, 1.0).to(torch::kFloat32), beta2On = either(on, h.beta2, 1.0).to(torch::kFloat32),
                      beta3On = either(on, beta3, 1.0).to(torch::kFloat32);
  const torch::Tensor mScale = (d_ * (1.0 - h.beta1) * on).to(torch::kFloat32);
  const torch::Tensor vScale = (d_ * d_ * (1.0 - h.beta2) * on).to(torch::kFloat32);
  const torch::Tensor sScale = (dOverD0 * (h.safeguardWarmup ? d_ : dlr) * on).to(torch::kFloat32);
  std::vector<torch::Tensor> dots, sNorms;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      torch::Tensor& p = groups_[g].params[i];
      if (!p.grad().defined()) continue;
      // Coupled weight decay goes into the gradient itself, in every group, as prodigyopt adds it.
      if (h.weightDecay != 0 && !h.decouple) p.mutable_grad().add_(p.detach(), h.weightDecay);
      if (!estimates(g)) continue;
      const torch::Tensor grad = float32(p.grad());
      const torch::Tensor slicedGrad = sliced(grad);
      dots.push_back(torch::dot(slicedGrad, float32(p0_.tensors[g][i]) - sliced(float32(p.detach()))));
      if (h.beta1 > 0) {
        torch::Tensor& m = expAvg_.tensors[g][i];
        const torch::Tensor m32 = float32(m);
        m32.mul_(beta1On).add_(grad * mScale);
        storeBack(m, m32);
      }
      torch::Tensor& v = expAvgSq_.tensors[g][i];
      const torch::Tensor v32 = float32(v);
      v32.mul_(beta2On).addcmul_(grad, grad * vScale);
      storeBack(v, v32);
      torch::Tensor& s = s_.tensors[g][i];
      const torch::Tensor s32 = float32(s);
      s32.mul_(beta3On).add_(slicedGrad * sScale);
      storeBack(s, s32);
      sNorms.push_back(s32.abs().sum());
    }

  // The estimate. With no sum of s (no gradient yet) prodigyopt returns before it: nothing after
  // this point changes then.
  const torch::Tensor dDenom = sum64(sNorms);
  const torch::Tensor progress = on * (dDenom > 0).to(torch::kFloat64);
  const torch::Tensor numerator = dNumerator_ * beta3 + dOverD0 * dlr * sum64(dots);
  const torch::Tensor dHat = h.dCoef * numerator / dDenom;
  const torch::Tensor dMax = torch::maximum(dMax_, dHat);
  const torch::Tensor d = torch::minimum(dMax, torch::where(d_ == h.d0, torch::maximum(d_, dHat), d_) * h.growthRate);
  commit(dNumerator_, progress, numerator);
  commit(dMax_, progress, dMax);
  commit(d_, progress, d);
  commit(k_, progress, k_ + 1.0);

  // Second pass, over every parameter: the step takes the d*lr of before the estimate (dlr), and
  // the new d in eps's place (and in the step without a first moment).
  const torch::Tensor epsD = (d_ * h.eps).to(torch::kFloat32);
  const torch::Tensor decay = (-h.weightDecay * dlr * progress).to(torch::kFloat32);
  const torch::Tensor stepSize = ((h.beta1 > 0 ? dlr : dlr * d_) * progress).to(torch::kFloat32);
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      torch::Tensor& p = groups_[g].params[i];
      if (!p.grad().defined()) continue;
      torch::Tensor weights = p.detach();
      const torch::Tensor p32 = float32(weights);
      const torch::Tensor denom = float32(expAvgSq_.tensors[g][i]).sqrt().add_(epsD);
      if (h.weightDecay != 0 && h.decouple) p32.add_(p32 * decay);
      const torch::Tensor direction = h.beta1 > 0 ? float32(expAvg_.tensors[g][i]) : float32(p.grad());
      p32.sub_(direction / denom * stepSize);
      storeBack(weights, p32);
    }
}

}  // namespace sinter::train

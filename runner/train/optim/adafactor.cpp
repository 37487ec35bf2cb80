#include "train/optim/adafactor.h"

#include <algorithm>
#include <cmath>

namespace sinter::train {

namespace {

torch::Tensor rms(const torch::Tensor& t) { return t.norm() / std::sqrt(static_cast<double>(std::max<int64_t>(1, t.numel()))); }

// float32 into bf16 with stochastic rounding: a random 16-bit number added below the kept bits,
// then the low half cut off (sd-scripts' copy_stochastic_).
void copyStochastic(torch::Tensor& target, const torch::Tensor& source) {
  torch::Tensor bits = torch::randint_like(source, 0, 1 << 16, source.options().dtype(torch::kInt32));
  bits.add_(source.view(torch::kInt32));
  bits.bitwise_and_(-65536);
  target.copy_(bits.view(torch::kFloat32));
}

}  // namespace

Adafactor::Adafactor(std::vector<OptimizerGroup> groups, AdafactorHyperparameters hyper, bool persistentGradients,
                     bool stochasticRounding)
    : Optimizer(std::move(groups), persistentGradients), hyper_(hyper), stochasticRounding_(stochasticRounding) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device_);
  for (const OptimizerGroup& g : groups_) {
    std::vector<torch::Tensor> m, row, col, v;
    for (const torch::Tensor& p : g.params) {
      m.push_back(hyper_.beta1 ? torch::zeros(p.sizes(), f32) : torch::Tensor());
      if (factored(p)) {
        const auto shape = p.sizes().vec();
        std::vector<int64_t> colShape(shape.begin(), shape.end() - 2);
        colShape.push_back(shape.back());
        row.push_back(torch::zeros(std::vector<int64_t>(shape.begin(), shape.end() - 1), f32));
        col.push_back(torch::zeros(colShape, f32));
        v.emplace_back();
      } else {
        row.emplace_back();
        col.emplace_back();
        v.push_back(torch::zeros(p.sizes(), f32));
      }
    }
    expAvg_.tensors.push_back(std::move(m));
    expAvgSqRow_.tensors.push_back(std::move(row));
    expAvgSqCol_.tensors.push_back(std::move(col));
    expAvgSq_.tensors.push_back(std::move(v));
  }
}

std::optional<double> Adafactor::ownLearningRate(long long step) const {
  if (!hyper_.relativeStep) return std::nullopt;
  const double s = static_cast<double>(std::max(1LL, step));
  return std::min(hyper_.warmupInit ? 1e-6 * s : 1e-2, 1.0 / std::sqrt(s));
}

torch::Tensor Adafactor::stepSize(size_t group) const {
  if (!hyper_.relativeStep) return lrs_[group];
  const torch::Tensor smallest = hyper_.warmupInit ? step_ * 1e-6 : torch::full_like(step_, 1e-2);
  return torch::minimum(smallest, step_.rsqrt());
}

torch::Tensor Adafactor::beta2t() const { return 1.0 - torch::pow(step_, hyper_.decayRate); }

void Adafactor::step() {
  torch::NoGradGuard noGrad;
  step_.add_(1.0);
  const torch::Tensor b2 = beta2t();
  for (size_t g = 0; g < groups_.size(); ++g) {
    const torch::Tensor size = stepSize(g);
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      torch::Tensor& p = groups_[g].params[i];
      if (p.grad().defined()) update(g, i, p, p.grad(), size, b2);  // as transformers: no gradient, no update
    }
  }
}

void Adafactor::step(const torch::Tensor& foundInf) {
  // Undone where a gradient overflowed: everything the step writes goes back to its value.
  torch::NoGradGuard noGrad;
  const torch::Tensor skip = foundInf.to(step_.device(), torch::kFloat32).reshape({}) > 0;
  std::vector<torch::Tensor> live = mutableTensors(), before;
  for (const torch::Tensor& t : live) before.push_back(t.detach().clone());
  step();
  for (size_t k = 0; k < live.size(); ++k) live[k].copy_(torch::where(skip, before[k], live[k]));
}

void Adafactor::advanceStep() {
  Optimizer::advanceStep();
  torch::NoGradGuard noGrad;
  stepSizes_.clear();
  for (size_t g = 0; g < groups_.size(); ++g) stepSizes_.push_back(stepSize(g));
  beta2t_ = beta2t();
}

void Adafactor::stepParameter(size_t group, size_t index) {
  torch::Tensor& p = groups_[group].params[index];
  if (p.grad().defined()) stepParameter(group, index, p, p.grad());
}

void Adafactor::stepParameter(size_t group, size_t index, torch::Tensor& param, const torch::Tensor& grad) {
  torch::NoGradGuard noGrad;
  update(group, index, param, grad, stepSizes_.at(group), beta2t_);
}

void Adafactor::update(size_t g, size_t i, torch::Tensor& p, const torch::Tensor& gradient, const torch::Tensor& relativeStepSize,
                       const torch::Tensor& b2) {
  // Float32 temporaries, each the parameter's size, are kept to three at a time (the gradient, the
  // update written in place of the squared gradient, the float32 parameter), as sd-scripts' fused
  // step keeps them: with a swapped block's largest Linear that is what sets the peak.
  torch::Tensor grad = gradient.to(torch::kFloat32);
  const torch::Tensor lr =
      hyper_.scaleParameter ? relativeStepSize * torch::clamp_min(rms(p.to(torch::kFloat32)), hyper_.eps2) : relativeStepSize;
  torch::Tensor u = grad.square();
  u.add_(hyper_.eps1);
  if (factored(p)) {
    torch::Tensor& row = expAvgSqRow_.tensors[g][i];
    torch::Tensor& col = expAvgSqCol_.tensors[g][i];
    row.mul_(b2).add_(u.mean(-1) * (1.0 - b2));
    col.mul_(b2).add_(u.mean(-2) * (1.0 - b2));
    // The second moment's approximation: rows normalised by their mean, times columns.
    const torch::Tensor rowFactor = (row / row.mean(-1, /*keepdim=*/true)).rsqrt().unsqueeze(-1);
    const torch::Tensor colFactor = col.unsqueeze(-2).rsqrt();
    at::mul_out(u, rowFactor, colFactor);
    u.mul_(grad);
  } else {
    torch::Tensor& v = expAvgSq_.tensors[g][i];
    v.mul_(b2).add_(u * (1.0 - b2));
    u = v.rsqrt() * grad;
  }
  grad.reset();
  u.div_(torch::clamp_min(rms(u) / hyper_.clipThreshold, 1.0)).mul_(lr);
  if (hyper_.beta1) {
    torch::Tensor& m = expAvg_.tensors[g][i];
    m.mul_(*hyper_.beta1).add_(u, 1.0 - *hyper_.beta1);
    u = m;
  }
  torch::Tensor p32 = p.scalar_type() == torch::kFloat32 ? p : p.to(torch::kFloat32);
  if (hyper_.weightDecay != 0.0) p32.add_(p32 * (-hyper_.weightDecay * lr));
  p32.sub_(u);
  if (p.scalar_type() == torch::kFloat32) return;
  if (stochasticRounding_ && p.scalar_type() == torch::kBFloat16) copyStochastic(p, p32);
  else p.copy_(p32);
}

}  // namespace sinter::train

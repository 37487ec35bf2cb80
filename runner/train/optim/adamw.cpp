#include "train/optim/adamw.h"

#include "train/optim/adjacent_span.h"

#if __has_include(<torch/version.h>)
#include <torch/version.h>
#endif

#if defined(TORCH_VERSION_MAJOR) && (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2))
#define SINTER_HAS_FUSED_ADAMW_TENSOR_LR 1
#else
#define SINTER_HAS_FUSED_ADAMW_TENSOR_LR 0
#endif
namespace sinter::train {

bool fusedAdamWCompiledIn() { return SINTER_HAS_FUSED_ADAMW_TENSOR_LR != 0; }

AdamW::AdamW(std::vector<OptimizerGroup> groups, AdamWHyperparameters hyper, bool allowFused)
    : Optimizer(std::move(groups), /*persistentGradients=*/true), hyper_(hyper) {
  bool allCudaFloat = true, any = false;
  for (const OptimizerGroup& g : groups_) {
    std::vector<torch::Tensor> m, v;
    for (const torch::Tensor& p : g.params) {
      any = true;
      allCudaFloat = allCudaFloat && p.is_cuda() && p.is_floating_point();
    }
    if (adjacentSpan(g.params).defined()) {
      // The moments lie as the parameters do, so the fused step runs over three spans (stepFused).
      m = zerosAdjacent(g.params);
      v = zerosAdjacent(g.params);
    } else {
      for (const torch::Tensor& p : g.params) {
        m.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve).detach());
        v.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve).detach());
      }
    }
    expAvg_.tensors.push_back(std::move(m));
    expAvgSq_.tensors.push_back(std::move(v));
  }
  fused_ = allowFused && fusedAdamWCompiledIn() && any && allCudaFloat;
}

void AdamW::step() {
  torch::NoGradGuard noGrad;
  step_.add_(1.0);
  if (fused_) stepFused({});
  else stepElementwise();
}

void AdamW::step(const torch::Tensor& foundInf) {
  torch::NoGradGuard noGrad;
  const torch::Tensor skip = foundInf.to(step_.device(), torch::kFloat32).reshape({}) > 0;
  if (fused_) {
    // The kernel itself leaves parameters and moments alone where found_inf is set.
    step_.add_(1.0);
    stepFused(foundInf);
    step_.sub_(skip.to(torch::kFloat32));
    return;
  }
  std::vector<torch::Tensor> before;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i)
      for (const torch::Tensor* t : {&groups_[g].params[i], &expAvg_.tensors[g][i], &expAvgSq_.tensors[g][i]})
        before.push_back(t->detach().clone());
  step_.add_(1.0);
  stepElementwise();
  size_t k = 0;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i)
      for (torch::Tensor* t : {&groups_[g].params[i], &expAvg_.tensors[g][i], &expAvgSq_.tensors[g][i]}) {
        t->copy_(torch::where(skip, before[k], *t));
        ++k;
      }
  step_.sub_(skip.to(torch::kFloat32));
}

void AdamW::computeBiasCorrections() {
  biasCorrection1_ = 1.0 - torch::pow(torch::full({}, hyper_.beta1, step_.options()), step_);
  biasCorrection2Sqrt_ = (1.0 - torch::pow(torch::full({}, hyper_.beta2, step_.options()), step_)).sqrt();
}

void AdamW::stepElementwise() {
  computeBiasCorrections();
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      torch::Tensor p = groups_[g].params[i];
      if (p.grad().defined()) updateParameter(g, i, p, p.grad());
    }
}

void AdamW::updateParameter(size_t g, size_t i, torch::Tensor& p, const torch::Tensor& grad) {
  const double b1 = hyper_.beta1, b2 = hyper_.beta2;
  const torch::Tensor& lr = lrs_[g];
  const torch::Tensor stepSize = (lr / biasCorrection1_).to(p.device());
  const torch::Tensor decay = (1.0 - lr * hyper_.weightDecay).to(p.device());
  torch::Tensor& m = expAvg_.tensors[g][i];
  torch::Tensor& v = expAvgSq_.tensors[g][i];
  const torch::Tensor gradHere = grad.to(m.device());
  p.mul_(decay.to(p.scalar_type()));
  m.lerp_(gradHere, 1.0 - b1);
  v.mul_(b2).addcmul_(gradHere, gradHere, 1.0 - b2);
  const torch::Tensor denom = (v.sqrt() / biasCorrection2Sqrt_.to(v.device(), v.scalar_type())).add_(hyper_.eps);
  p.sub_(((m / denom) * stepSize.to(m.device())).to(p.device(), p.scalar_type()));
}

void AdamW::advanceStep() {
  Optimizer::advanceStep();
  torch::NoGradGuard noGrad;
  computeBiasCorrections();
}

void AdamW::stepParameter(size_t group, size_t index) {
  torch::NoGradGuard noGrad;
  torch::Tensor p = groups_[group].params[index];
  if (p.grad().defined()) updateParameter(group, index, p, p.grad());
}

void AdamW::stepParameter(size_t group, size_t index, torch::Tensor& param, const torch::Tensor& grad) {
  torch::NoGradGuard noGrad;
  updateParameter(group, index, param, grad);
}

void AdamW::stepFused(const torch::Tensor& foundInf) {
#if SINTER_HAS_FUSED_ADAMW_TENSOR_LR
  for (size_t g = 0; g < groups_.size(); ++g) {
    std::vector<torch::Tensor> params, grads, steps;
    for (const torch::Tensor& p : groups_[g].params) {
      params.push_back(p);
      grads.push_back(p.grad());
    }
    if (params.empty()) continue;
    std::vector<torch::Tensor> m = expAvg_.tensors[g], v = expAvgSq_.tensors[g];
    // Parameters, gradients and moments each in one buffer (the compute copies' masters): one
    // span each, the same elementwise update in a few launches.
    const torch::Tensor paramSpan = adjacentSpan(params), gradSpan = adjacentSpan(grads), mSpan = adjacentSpan(m),
                        vSpan = adjacentSpan(v);
    if (paramSpan.defined() && gradSpan.defined() && mSpan.defined() && vSpan.defined()) {
      params = {paramSpan};
      grads = {gradSpan};
      m = {mSpan};
      v = {vSpan};
    }
    // The kernel reads a step count per parameter and never writes it: every entry is the one
    // step tensor, already advanced (no small kernel per parameter to advance copies of it).
    steps.assign(params.size(), step_);
    const c10::optional<torch::Tensor> found = foundInf.defined() ? c10::optional<torch::Tensor>(foundInf) : c10::nullopt;
    at::_fused_adamw_(params, grads, m, v, /*max_exp_avg_sqs=*/{}, steps, lrs_[g], hyper_.beta1, hyper_.beta2,
                      hyper_.weightDecay, hyper_.eps, /*amsgrad=*/false, /*maximize=*/false,
                      /*grad_scale=*/c10::nullopt, found);
  }
#else
  (void)foundInf;
  stepElementwise();
#endif
}

}  // namespace sinter::train

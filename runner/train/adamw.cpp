#include "train/adamw.h"

#include <stdexcept>

#if __has_include(<torch/version.h>)
#include <torch/version.h>
#endif

#if defined(TORCH_VERSION_MAJOR) && (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2))
#define SINTER_HAS_FUSED_ADAMW_TENSOR_LR 1
#else
#define SINTER_HAS_FUSED_ADAMW_TENSOR_LR 0
#endif
// Multi-tensor zeroing (one launch for many gradients): PyTorch >= 2.0.
#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
#define SINTER_HAS_FOREACH_ZERO 1
#else
#define SINTER_HAS_FOREACH_ZERO 0
#endif

namespace sinter::train {

bool fusedAdamWCompiledIn() { return SINTER_HAS_FUSED_ADAMW_TENSOR_LR != 0; }

AdamW::AdamW(std::vector<OptimizerGroup> groups, AdamWHyperparameters hyper, bool allowFused)
    : groups_(std::move(groups)), hyper_(hyper) {
  torch::Device device = torch::kCPU;
  bool found = false;
  bool allCudaFloat = true;
  for (const OptimizerGroup& g : groups_)
    for (const torch::Tensor& p : g.params) {
      if (!found) device = p.device(), found = true;
      if (p.device() != device) throw std::invalid_argument("AdamW: parameters on more than one device");
      allCudaFloat = allCudaFloat && p.is_cuda() && p.is_floating_point();
    }
  const auto fopts = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  step_ = torch::zeros({}, fopts);
  for (const OptimizerGroup& g : groups_) {
    lrs_.push_back(torch::full({}, g.lr, fopts));
    std::vector<torch::Tensor> m, v;
    for (const torch::Tensor& p : g.params) {
      m.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve).detach());
      v.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve).detach());
    }
    expAvg_.push_back(std::move(m));
    expAvgSq_.push_back(std::move(v));
  }
  fused_ = allowFused && fusedAdamWCompiledIn() && found && allCudaFloat;
  // Persistent gradient buffers: backward accumulates into the same memory every step (a captured
  // step replays into it), and nothing downstream branches on whether a gradient exists.
  torch::NoGradGuard noGrad;
  for (OptimizerGroup& g : groups_)
    for (torch::Tensor& p : g.params)
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p, torch::MemoryFormat::Preserve);
}

std::vector<torch::Tensor> AdamW::parameters() const {
  std::vector<torch::Tensor> all;
  for (const OptimizerGroup& g : groups_) all.insert(all.end(), g.params.begin(), g.params.end());
  return all;
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
      for (const torch::Tensor* t : {&groups_[g].params[i], &expAvg_[g][i], &expAvgSq_[g][i]})
        before.push_back(t->detach().clone());
  step_.add_(1.0);
  stepElementwise();
  size_t k = 0;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i)
      for (torch::Tensor* t : {&groups_[g].params[i], &expAvg_[g][i], &expAvgSq_[g][i]}) {
        t->copy_(torch::where(skip, before[k], *t));
        ++k;
      }
  step_.sub_(skip.to(torch::kFloat32));
}

void AdamW::stepElementwise() {
  const double b1 = hyper_.beta1, b2 = hyper_.beta2;
  // Bias corrections as device tensors from the device step count (no host read).
  const torch::Tensor biasCorrection1 = 1.0 - torch::pow(torch::full({}, b1, step_.options()), step_);
  const torch::Tensor biasCorrection2Sqrt = (1.0 - torch::pow(torch::full({}, b2, step_.options()), step_)).sqrt();
  for (size_t g = 0; g < groups_.size(); ++g) {
    const torch::Tensor& lr = lrs_[g];
    const torch::Tensor stepSize = lr / biasCorrection1;
    const torch::Tensor decay = 1.0 - lr * hyper_.weightDecay;
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      torch::Tensor p = groups_[g].params[i];
      const torch::Tensor grad = p.grad();
      torch::Tensor& m = expAvg_[g][i];
      torch::Tensor& v = expAvgSq_[g][i];
      p.mul_(decay.to(p.scalar_type()));
      m.lerp_(grad, 1.0 - b1);
      v.mul_(b2).addcmul_(grad, grad, 1.0 - b2);
      const torch::Tensor denom = (v.sqrt() / biasCorrection2Sqrt.to(v.scalar_type())).add_(hyper_.eps);
      p.sub_((m / denom) * stepSize.to(p.scalar_type()));
    }
  }
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
    // The kernel reads a step count per parameter and never writes it: every entry is the one
    // step tensor, already advanced (no small kernel per parameter to advance copies of it).
    steps.assign(params.size(), step_);
    const c10::optional<torch::Tensor> found = foundInf.defined() ? c10::optional<torch::Tensor>(foundInf) : c10::nullopt;
    at::_fused_adamw_(params, grads, expAvg_[g], expAvgSq_[g], /*max_exp_avg_sqs=*/{}, steps, lrs_[g], hyper_.beta1, hyper_.beta2,
                      hyper_.weightDecay, hyper_.eps, /*amsgrad=*/false, /*maximize=*/false,
                      /*grad_scale=*/c10::nullopt, found);
  }
#else
  (void)foundInf;
  stepElementwise();
#endif
}

void AdamW::zeroGrad() {
  torch::NoGradGuard noGrad;
#if SINTER_HAS_FOREACH_ZERO
  std::vector<torch::Tensor> grads;
  for (OptimizerGroup& g : groups_)
    for (torch::Tensor& p : g.params) grads.push_back(p.mutable_grad());
  at::_foreach_zero_(grads);
#else
  for (OptimizerGroup& g : groups_)
    for (torch::Tensor& p : g.params) p.mutable_grad().zero_();
#endif
}

std::vector<torch::Tensor> AdamW::mutableTensors() const {
  std::vector<torch::Tensor> all{step_};
  all.insert(all.end(), lrs_.begin(), lrs_.end());
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i)
      for (const torch::Tensor& t : {groups_[g].params[i], groups_[g].params[i].grad(), expAvg_[g][i], expAvgSq_[g][i]})
        all.push_back(t);
  return all;
}

std::vector<std::pair<std::string, torch::Tensor>> AdamW::stateTensors() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  out.emplace_back("step", step_.detach().cpu().clone());
  for (size_t g = 0; g < groups_.size(); ++g) {
    out.emplace_back("lr." + std::to_string(g), lrs_[g].detach().cpu().clone());
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const std::string suffix = std::to_string(g) + "." + std::to_string(i);
      out.emplace_back("exp_avg." + suffix, expAvg_[g][i].detach().cpu().clone());
      out.emplace_back("exp_avg_sq." + suffix, expAvgSq_[g][i].detach().cpu().clone());
    }
  }
  return out;
}

void AdamW::loadStateTensors(const std::map<std::string, torch::Tensor>& state) {
  torch::NoGradGuard noGrad;
  auto take = [&](const std::string& key, torch::Tensor& dst) {
    auto it = state.find(key);
    if (it == state.end()) throw std::invalid_argument("optimizer state: '" + key + "' is missing");
    if (it->second.sizes() != dst.sizes())
      throw std::invalid_argument("optimizer state: '" + key + "' has another shape than the parameter it belongs to");
    dst.copy_(it->second.to(dst.device(), dst.scalar_type()));
  };
  take("step", step_);
  for (size_t g = 0; g < groups_.size(); ++g) {
    take("lr." + std::to_string(g), lrs_[g]);
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const std::string suffix = std::to_string(g) + "." + std::to_string(i);
      take("exp_avg." + suffix, expAvg_[g][i]);
      take("exp_avg_sq." + suffix, expAvgSq_[g][i]);
    }
  }
  size_t expected = 1;
  for (const OptimizerGroup& g : groups_) expected += 1 + 2 * g.params.size();
  if (state.size() != expected)
    throw std::invalid_argument("optimizer state: " + std::to_string(state.size()) + " tensors, expected " +
                                std::to_string(expected) + " (a state saved for another network?)");
}

}  // namespace sinter::train

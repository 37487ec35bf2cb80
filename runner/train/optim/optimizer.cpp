#include "train/optim/optimizer.h"

#include "train/optim/adjacent_span.h"

#include <stdexcept>

#if __has_include(<torch/version.h>)
#include <torch/version.h>
#endif

// Multi-tensor zeroing (one launch for many gradients): PyTorch >= 2.0.
#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
#define SINTER_HAS_FOREACH_ZERO 1
#else
#define SINTER_HAS_FOREACH_ZERO 0
#endif

namespace sinter::train {

Optimizer::Optimizer(std::vector<OptimizerGroup> groups, bool persistentGradients) : groups_(std::move(groups)) {
  for (const OptimizerGroup& g : groups_)
    for (const torch::Tensor& p : g.params)
      if (!p.is_cpu()) device_ = p.device();
  for (const OptimizerGroup& g : groups_)
    for (const torch::Tensor& p : g.params)
      if (p.device() != device_ && !p.is_cpu()) throw std::invalid_argument("optimizer: parameters on more than one device");
  const auto fopts = torch::TensorOptions().dtype(torch::kFloat32).device(device_);
  step_ = torch::zeros({}, fopts);
  for (const OptimizerGroup& g : groups_) lrs_.push_back(torch::full({}, g.lr, fopts));
  if (!persistentGradients) return;
  // Persistent gradient buffers: backward accumulates into the same memory every step (a captured
  // step replays into it), and nothing downstream branches on whether a gradient exists.
  torch::NoGradGuard noGrad;
  for (OptimizerGroup& g : groups_)
    for (torch::Tensor& p : g.params)
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p, torch::MemoryFormat::Preserve);
}

std::vector<torch::Tensor> Optimizer::parameters() const {
  std::vector<torch::Tensor> all;
  for (const OptimizerGroup& g : groups_) all.insert(all.end(), g.params.begin(), g.params.end());
  return all;
}

void Optimizer::advanceStep() {
  torch::NoGradGuard noGrad;
  step_.add_(1.0);
}

void Optimizer::stepParameter(size_t, size_t) {
  throw std::logic_error("this optimizer has no per-parameter step (fused_backward_pass)");
}

void Optimizer::stepParameter(size_t, size_t, torch::Tensor&, const torch::Tensor&) {
  throw std::logic_error("this optimizer has no per-parameter step (fused_backward_pass)");
}

void Optimizer::zeroGrad() {
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> grads;
  for (OptimizerGroup& g : groups_)
    for (torch::Tensor& p : g.params)
      if (p.grad().defined()) grads.push_back(p.mutable_grad());
#if SINTER_HAS_FOREACH_ZERO
  if (!grads.empty()) at::_foreach_zero_(asOneSpanIfAdjacent(grads));
#else
  for (torch::Tensor& grad : grads) grad.zero_();
#endif
}

std::vector<const Optimizer::StateKind*> Optimizer::stateKinds() const {
  std::vector<const StateKind*> out;
  for (StateKind* k : const_cast<Optimizer*>(this)->stateKinds()) out.push_back(k);
  return out;
}

std::vector<torch::Tensor> Optimizer::mutableTensors(bool withGradients, bool withParameters) const {
  std::vector<torch::Tensor> all{step_};
  all.insert(all.end(), lrs_.begin(), lrs_.end());
  for (const OptimizerGroup& g : groups_)
    for (const torch::Tensor& p : g.params) {
      if (withParameters) all.push_back(p);
      if (withGradients && p.grad().defined()) all.push_back(p.grad());
    }
  for (const StateKind* kind : stateKinds())
    for (const auto& group : kind->tensors)
      for (const torch::Tensor& t : group)
        if (t.defined()) all.push_back(t);
  for (const auto& [name, t] : const_cast<Optimizer*>(this)->globalStates()) all.push_back(*t);
  return all;
}

std::optional<torch::Tensor> Optimizer::globalState(const std::string& name) const {
  for (const auto& [stateName, t] : const_cast<Optimizer*>(this)->globalStates())
    if (stateName == name) return *t;
  return std::nullopt;
}

std::vector<std::pair<std::string, torch::Tensor>> Optimizer::stateTensors() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  out.emplace_back("step", step_.detach().cpu().clone());
  for (size_t g = 0; g < groups_.size(); ++g) out.emplace_back("lr." + std::to_string(g), lrs_[g].detach().cpu().clone());
  for (const StateKind* kind : stateKinds())
    for (size_t g = 0; g < kind->tensors.size(); ++g)
      for (size_t i = 0; i < kind->tensors[g].size(); ++i)
        if (kind->tensors[g][i].defined())
          out.emplace_back(kind->name + "." + std::to_string(g) + "." + std::to_string(i), kind->tensors[g][i].detach().cpu().clone());
  for (const auto& [name, t] : const_cast<Optimizer*>(this)->globalStates()) out.emplace_back(name, t->detach().cpu().clone());
  return out;
}

void Optimizer::loadStateTensors(const std::map<std::string, torch::Tensor>& state) {
  torch::NoGradGuard noGrad;
  size_t expected = 0;
  auto take = [&](const std::string& key, torch::Tensor& dst) {
    auto it = state.find(key);
    if (it == state.end())
      throw std::invalid_argument("optimizer state: '" + key + "' is missing (a state saved by another optimizer or network?)");
    if (it->second.sizes() != dst.sizes())
      throw std::invalid_argument("optimizer state: '" + key + "' has another shape than the parameter it belongs to");
    dst.copy_(it->second.to(dst.device(), dst.scalar_type()));
    ++expected;
  };
  take("step", step_);
  for (size_t g = 0; g < groups_.size(); ++g) take("lr." + std::to_string(g), lrs_[g]);
  for (StateKind* kind : stateKinds())
    for (size_t g = 0; g < kind->tensors.size(); ++g)
      for (size_t i = 0; i < kind->tensors[g].size(); ++i)
        if (kind->tensors[g][i].defined()) take(kind->name + "." + std::to_string(g) + "." + std::to_string(i), kind->tensors[g][i]);
  for (const auto& [name, t] : globalStates()) take(name, *t);
  if (state.size() != expected)
    throw std::invalid_argument("optimizer state: " + std::to_string(state.size()) + " tensors, expected " +
                                std::to_string(expected) + " (a state saved by another optimizer or network?)");
}

}  // namespace sinter::train

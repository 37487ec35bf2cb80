#include "train/optim/dadaptation_optimizer.h"

#include <algorithm>
#include <stdexcept>

#include "network/python_format.h"

namespace sinter::train {

DAdaptationOptimizer::DAdaptationOptimizer(std::string name, std::vector<OptimizerGroup> groups, double d0)
    : Optimizer(std::move(groups), /*persistentGradients=*/true), name_(std::move(name)), d0_(d0) {
  double largest = 0.0;
  for (const OptimizerGroup& g : groups_) largest = std::max(largest, g.lr);
  if (!(largest > 0.0)) throw std::invalid_argument(name_ + ": the learning rate must be greater than 0 (1.0 is usual)");
  // The schedule scales every group alike, so groups that start equal stay equal.
  for (const OptimizerGroup& g : groups_)
    if (g.lr != largest && g.lr != 0.0) {
      std::string list;
      for (const OptimizerGroup& h : groups_) list += (list.empty() ? "" : ", ") + h.label + " " + network::pythonFloatRepr(h.lr);
      throw std::invalid_argument(name_ + " takes one learning rate for every parameter group (or 0), as its Python optimizer "
                                  "requires; these differ: " + list + " (set text_encoder_lr and unet_lr alike, or leave them unset)");
    }
  d_ = scalar(d0);
}

torch::Tensor DAdaptationOptimizer::scalar(double value) const {
  return torch::full({}, value, torch::TensorOptions().dtype(torch::kFloat64).device(device_));
}

void DAdaptationOptimizer::zeroStates(std::initializer_list<StateKind*> kinds) {
  for (StateKind* kind : kinds)
    for (const OptimizerGroup& g : groups_) {
      std::vector<torch::Tensor> zeros;
      for (const torch::Tensor& p : g.params) zeros.push_back(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
      kind->tensors.push_back(std::move(zeros));
    }
}

torch::Tensor DAdaptationOptimizer::either(const torch::Tensor& on, double yes, double no) const {
  return torch::where(on > 0, scalar(yes), scalar(no));
}

void DAdaptationOptimizer::commit(torch::Tensor& state, const torch::Tensor& apply, const torch::Tensor& value) {
  state.copy_(torch::where(apply > 0, value.to(state.scalar_type()), state));
}

torch::Tensor DAdaptationOptimizer::sum64(const std::vector<torch::Tensor>& values) const {
  if (values.empty()) return scalar(0.0);
  return torch::stack(values).to(torch::kFloat64).sum();
}

torch::Tensor DAdaptationOptimizer::largestLr() const { return torch::stack(lrs_).max().to(torch::kFloat64); }

torch::Tensor DAdaptationOptimizer::float32(const torch::Tensor& t) {
  return t.scalar_type() == torch::kFloat32 ? t : t.to(torch::kFloat32);
}

void DAdaptationOptimizer::storeBack(torch::Tensor& t, const torch::Tensor& value32) {
  if (!t.is_same(value32)) t.copy_(value32);
}

void DAdaptationOptimizer::step() {
  torch::NoGradGuard noGrad;
  update(scalar(1.0));
  step_.add_(1.0);
}

void DAdaptationOptimizer::step(const torch::Tensor& foundInf) {
  torch::NoGradGuard noGrad;
  const torch::Tensor skip = foundInf.to(step_.device(), torch::kFloat32).reshape({}) > 0;
  for (OptimizerGroup& g : groups_)
    for (torch::Tensor& p : g.params)
      if (p.grad().defined()) p.mutable_grad().masked_fill_(skip, 0.0);
  const torch::Tensor on = torch::logical_not(skip).to(torch::kFloat64);
  update(on);
  step_.add_(on.to(torch::kFloat32));
}

void DAdaptationOptimizer::stepParameter(size_t, size_t) {
  throw std::logic_error(name_ + " has no per-parameter step (fused_backward_pass): its step size comes from sums over every "
                         "parameter's gradient, so no parameter can be updated before backward has finished");
}

void DAdaptationOptimizer::stepParameter(size_t group, size_t index, torch::Tensor&, const torch::Tensor&) { stepParameter(group, index); }

}  // namespace sinter::train

#pragma once
// What Prodigy and the D-Adaptation optimizers share: one step size d for every parameter,
// re-estimated each step from sums over all parameters of all groups, so no parameter can be
// updated before every gradient is in (no per-parameter step: fused_backward_pass is Adafactor's).
// d and the sums stay 0-dim float64 device tensors (the Python floats of prodigyopt and
// dadaptation), so a step reads no host value and a graph can capture it. The learning rate they
// apply is the largest group's: the groups share one (or have 0), as those optimizers require.
// Moments and the other per-parameter state have the parameter's dtype, as there; the arithmetic
// runs in float32.
#include <torch/torch.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "train/optim/optimizer.h"

namespace sinter::train {

class DAdaptationOptimizer : public Optimizer {
 public:
  void step() final;
  // fp16 overflow: the gradients are cleared (an inf would reach every sum) and the step runs with
  // nothing applied, so parameters, state, d and the step count keep their values.
  void step(const torch::Tensor& foundInf) final;
  void stepParameter(size_t group, size_t index) override;
  void stepParameter(size_t group, size_t index, torch::Tensor& param, const torch::Tensor& grad) override;
  const std::string& name() const { return name_; }

 protected:
  // name: the optimizer_type, for messages. Groups whose learning rates differ (other than 0) are
  // std::invalid_argument, as the Python optimizers refuse them at their first step.
  DAdaptationOptimizer(std::string name, std::vector<OptimizerGroup> groups, double d0);

  // One step of the algorithm. `on` (0-dim float64 on the device) is 1, or 0 for a skipped step:
  // every coefficient it multiplies is then 0 (and every decay 1), and every global value keeps its own.
  virtual void update(const torch::Tensor& on) = 0;

  // The largest group learning rate now (0-dim float64): the lr every group's step takes.
  torch::Tensor largestLr() const;
  // Whether group g's parameters enter the sums and moments (the Python optimizers skip a group whose lr is 0).
  bool estimates(size_t group) const { return groups_[group].lr > 0.0; }
  // 0-dim float64 on the device.
  torch::Tensor scalar(double value) const;
  // Fills each state kind with a zero tensor per parameter (contiguous, the parameter's dtype).
  void zeroStates(std::initializer_list<StateKind*> kinds);
  // where(on, yes, no) for scalars: a factor that is exactly `no` on a skipped step.
  torch::Tensor either(const torch::Tensor& on, double yes, double no) const;
  // state <- value where `apply` (0-dim) is 1; kept otherwise (a NaN in an unused value stays out).
  static void commit(torch::Tensor& state, const torch::Tensor& apply, const torch::Tensor& value);
  // The sum of 0-dim tensors in float64 (0 when empty).
  torch::Tensor sum64(const std::vector<torch::Tensor>& values) const;

  // t's values in float32: t itself when it is float32 (updated in place), else a copy that
  // storeBack writes back, rounded to t's dtype.
  static torch::Tensor float32(const torch::Tensor& t);
  static void storeBack(torch::Tensor& t, const torch::Tensor& value32);

  std::string name_;
  double d0_;
  torch::Tensor d_;  // the step size estimate, 0-dim float64
};

}  // namespace sinter::train

#pragma once
// What the training loop asks of an optimizer (AdamW, Adafactor): parameter groups whose learning
// rates and step count are device tensors (a captured step reads no host value), a step with or
// without fp16's overflow flag, and its state for resume. Gradients live in persistent buffers
// that backward adds to, except under a fused backward pass (fused_backward.h), where each
// parameter is stepped as soon as its gradient is complete and the gradient is then freed.
#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sinter::train {

struct OptimizerGroup {
  std::string label;
  double lr = 0.0;  // the group's initial (base) learning rate
  std::vector<torch::Tensor> params;
};

class Optimizer {
 public:
  // persistentGradients: every parameter gets a zero gradient buffer now, which backward adds to.
  // The state lives on the parameters' device; parameters in host memory (swapped blocks' masters,
  // stepped through device copies) may sit beside those on an accelerator.
  Optimizer(std::vector<OptimizerGroup> groups, bool persistentGradients);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Increments the step count, then updates every parameter.
  virtual void step() = 0;
  // fp16 loss scaling: the same step, undone on the device where `foundInf` (LossScaler::unscale)
  // is set: parameters, state and the step count keep their values. No host read.
  virtual void step(const torch::Tensor& foundInf) = 0;
  // A fused backward pass: the step count is advanced once (advanceStep) before the backward pass,
  // then each parameter is updated from its gradient alone. Optimizers without it throw.
  virtual void advanceStep();
  virtual void stepParameter(size_t group, size_t index);
  // The same for a parameter kept in host memory and stepped through its device copy `param`
  // (blocks_to_swap), from `grad`, with parameter [group][index]'s state.
  virtual void stepParameter(size_t group, size_t index, torch::Tensor& param, const torch::Tensor& grad);
  void zeroGrad();  // zeroes the gradient buffers in place (they stay where a graph wrote them)

  size_t groupCount() const { return groups_.size(); }
  const OptimizerGroup& group(size_t i) const { return groups_[i]; }
  // 0-dim float32 on the parameters' device: the group's current lr (the scheduler writes it).
  torch::Tensor& lr(size_t group) { return lrs_[group]; }
  const torch::Tensor& lr(size_t group) const { return lrs_[group]; }
  // 0-dim float32 on the device: the number of completed steps.
  const torch::Tensor& stepCount() const { return step_; }
  std::vector<torch::Tensor> parameters() const;
  torch::Device device() const { return device_; }
  // The learning rate the optimizer sets itself for step `step` (1-based), when it ignores the
  // scheduler's (Adafactor's relative step); nullopt otherwise.
  virtual std::optional<double> ownLearningRate(long long /*step*/) const { return std::nullopt; }
  // Whether a step at learning rate 0 leaves every parameter bit-unchanged: its update is
  // p <- p * (1 - lr * wd) - lr * u with a finite u, so each parameter moves by +-0 (which changes
  // only a negative zero or a non-finite value: StateSnapshot copies those). Warm-up steps then
  // need no copy of the parameters (OptimizerUpdate::warmupUndo). True only where the update was
  // read for it; not where the optimizer sets its own rate or estimates a step size across steps.
  virtual bool zeroLearningRateKeepsParameters() const { return false; }
  // An optimizer-wide state by name (D-Adaptation's and Prodigy's step size "d", which the run's
  // log reads): the live 0-dim tensor on the device, or nullopt where the optimizer has none.
  std::optional<torch::Tensor> globalState(const std::string& name) const;

  // Every tensor a step changes: parameters, gradients (unless `withGradients` is false: between
  // steps they are zero), state, step count and learning rates (the live tensors, for undoing
  // warm-up steps; stateTensors() is the saved form).
  // `withParameters` false: all but the parameters (a warm-up that leaves them unchanged).
  std::vector<torch::Tensor> mutableTensors(bool withGradients = true, bool withParameters = true) const;
  // State for resume: "step", "lr.<g>", the optimizer's own "<name>.<g>.<i>" and its optimizer-wide
  // "<name>" (CPU copies).
  std::vector<std::pair<std::string, torch::Tensor>> stateTensors() const;
  // Loads a state written by stateTensors for the same groups; a missing key, a shape that differs
  // or a tensor count that differs is std::invalid_argument naming it.
  void loadStateTensors(const std::map<std::string, torch::Tensor>& state);

 protected:
  // The optimizer's per-parameter state, by name ("exp_avg"): each [group][index], undefined where a
  // parameter has none of that kind.
  struct StateKind {
    std::string name;
    std::vector<std::vector<torch::Tensor>> tensors;
  };
  virtual std::vector<StateKind*> stateKinds() = 0;
  std::vector<const StateKind*> stateKinds() const;
  // The optimizer-wide state, by name without a dot (D-Adaptation's step size "d"): 0-dim tensors
  // on the device, saved and loaded with the rest.
  virtual std::vector<std::pair<std::string, torch::Tensor*>> globalStates() { return {}; }

  std::vector<OptimizerGroup> groups_;
  torch::Device device_ = torch::kCPU;
  torch::Tensor step_;
  std::vector<torch::Tensor> lrs_;
};

}  // namespace sinter::train

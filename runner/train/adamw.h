#pragma once
// AdamW (torch.optim.AdamW's math) over parameter groups, with everything a captured step reads
// held in device tensors: the step count and each group's learning rate. The learning-rate
// scheduler writes the lr tensors (lr_schedule.h); nothing here reads a host value per step.
// Where the libtorch has the fused multi-tensor kernel with a tensor learning rate
// (at::_fused_adamw_, PyTorch >= 2.2, CUDA), it is used; otherwise the same math runs as
// elementwise tensor ops.
#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "train/optimizer_args.h"

namespace sinter::train {

struct OptimizerGroup {
  std::string label;
  double lr = 0.0;  // the group's initial (base) learning rate
  std::vector<torch::Tensor> params;
};

// Whether this build can use the fused kernel at all (compile-time libtorch version).
bool fusedAdamWCompiledIn();

class AdamW {
 public:
  AdamW(std::vector<OptimizerGroup> groups, AdamWHyperparameters hyper, bool allowFused = true);

  // Every parameter gets a persistent gradient buffer at construction (zeros); backward adds to it.
  // Updates every parameter. Increments the step tensor first, as torch.
  void step();
  // fp16 loss scaling: the same step, undone on the device where `foundInf` (LossScaler::unscale)
  // is set: parameters, moments and the step count keep their values. No host read.
  void step(const torch::Tensor& foundInf);
  void zeroGrad();  // zeroes the gradient buffers in place (they stay where a graph wrote them)

  size_t groupCount() const { return groups_.size(); }
  const OptimizerGroup& group(size_t i) const { return groups_[i]; }
  // 0-dim float32 on the parameters' device: the group's current lr (the scheduler writes it).
  torch::Tensor& lr(size_t group) { return lrs_[group]; }
  const torch::Tensor& lr(size_t group) const { return lrs_[group]; }
  // 0-dim float32 on the device: the number of completed steps.
  const torch::Tensor& stepCount() const { return step_; }
  // Every tensor a step changes: parameters, gradients, moments, step counts and learning rates
  // (the live tensors, for undoing warm-up steps; stateTensors() is the saved form).
  std::vector<torch::Tensor> mutableTensors() const;
  const AdamWHyperparameters& hyper() const { return hyper_; }
  bool usesFusedKernel() const { return fused_; }
  std::vector<torch::Tensor> parameters() const;

  // State for resume: "step", "lr.<g>", "exp_avg.<g>.<i>", "exp_avg_sq.<g>.<i>" (CPU copies).
  std::vector<std::pair<std::string, torch::Tensor>> stateTensors() const;
  // Loads a state written by stateTensors for the same groups; a missing key or a shape that
  // differs is std::invalid_argument naming it.
  void loadStateTensors(const std::map<std::string, torch::Tensor>& state);

 private:
  void stepElementwise();
  void stepFused(const torch::Tensor& foundInf);
  std::vector<OptimizerGroup> groups_;
  AdamWHyperparameters hyper_;
  bool fused_ = false;
  torch::Tensor step_;
  std::vector<torch::Tensor> lrs_;
  std::vector<std::vector<torch::Tensor>> expAvg_, expAvgSq_;
};

}  // namespace sinter::train

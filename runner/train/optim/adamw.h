#pragma once
// AdamW (torch.optim.AdamW's math) over parameter groups, with everything a captured step reads
// held in device tensors: the step count and each group's learning rate. The learning-rate
// scheduler writes the lr tensors (lr_schedule.h); nothing here reads a host value per step.
// Where the libtorch has the fused multi-tensor kernel with a tensor learning rate
// (at::_fused_adamw_, PyTorch >= 2.2, CUDA), it is used; otherwise the same math runs as
// elementwise tensor ops.
#include <torch/torch.h>

#include <vector>

#include "train/optim/optimizer.h"
#include "train/optim/optimizer_args.h"

namespace sinter::train {

// Whether this build can use the fused kernel at all (compile-time libtorch version).
bool fusedAdamWCompiledIn();

class AdamW : public Optimizer {
 public:
  AdamW(std::vector<OptimizerGroup> groups, AdamWHyperparameters hyper, bool allowFused = true);

  void step() override;
  void step(const torch::Tensor& foundInf) override;
  // Per parameter, as its gradient completes (fused_optimizer_groups, blockwise_fused_optimizers):
  // advanceStep() once (it also computes the step's bias corrections), then stepParameter() each.
  void advanceStep() override;
  void stepParameter(size_t group, size_t index) override;
  void stepParameter(size_t group, size_t index, torch::Tensor& param, const torch::Tensor& grad) override;
  const AdamWHyperparameters& hyper() const { return hyper_; }
  // p <- p * (1 - lr * wd) - (lr / bias_correction1) * m / (sqrt(v) / bias_correction2_sqrt + eps),
  // here and in the fused kernel: at lr 0 each parameter moves by +-0.
  bool zeroLearningRateKeepsParameters() const override { return true; }
  bool usesFusedKernel() const { return fused_; }

 protected:
  std::vector<StateKind*> stateKinds() override { return {&expAvg_, &expAvgSq_}; }

 private:
  void stepElementwise();
  // The step's bias corrections, from the device step count (no host read), once per step.
  void computeBiasCorrections();
  void updateParameter(size_t group, size_t index, torch::Tensor& p, const torch::Tensor& grad);
  void stepFused(const torch::Tensor& foundInf);
  AdamWHyperparameters hyper_;
  bool fused_ = false;
  StateKind expAvg_{"exp_avg", {}}, expAvgSq_{"exp_avg_sq", {}};
  torch::Tensor biasCorrection1_, biasCorrection2Sqrt_;  // of the current step
};

}  // namespace sinter::train

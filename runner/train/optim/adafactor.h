#pragma once
// Adafactor as transformers.optimization.Adafactor computes it (the optimizer sd-scripts' full
// fine-tuning recommends): the second moment of a matrix factored into row and column means, the
// update clipped by its RMS, the step size relative (min(1e-2, 1/sqrt(step)), or 1e-6 * step with
// warmup_init) or the scheduler's lr, scaled by the parameter's RMS (scale_parameter). The math runs
// in float32 on device tensors (no host read); bf16 and fp16 parameters are updated through a
// float32 copy and rounded back: to nearest, or stochastically where sd-scripts' fused backward
// pass does (library/adafactor_fused.py), so that small updates are not lost to bf16's 8 bits.
#include <torch/torch.h>

#include <vector>

#include "train/optim/optimizer.h"
#include "train/optim/optimizer_args.h"

namespace sinter::train {

class Adafactor : public Optimizer {
 public:
  // persistentGradients: false under a fused backward pass (each gradient is freed once used).
  Adafactor(std::vector<OptimizerGroup> groups, AdafactorHyperparameters hyper, bool persistentGradients = true,
            bool stochasticRounding = false);

  void step() override;
  void step(const torch::Tensor& foundInf) override;
  void advanceStep() override;  // also computes the step's sizes and decay once, for stepParameter
  void stepParameter(size_t group, size_t index) override;
  void stepParameter(size_t group, size_t index, torch::Tensor& param, const torch::Tensor& grad) override;
  std::optional<double> ownLearningRate(long long step) const override;
  // With the scheduler's lr and no first moment: the update (lr times the clipped, RMS-scaled
  // step) and the weight decay are +-0 at lr 0, and stochastic rounding keeps a bf16 value that did
  // not move. Not with relative_step (its own rate), nor with beta1 (the first moment, which keeps
  // moving the parameters at lr 0 once it is nonzero).
  bool zeroLearningRateKeepsParameters() const override { return !hyper_.relativeStep && !hyper_.beta1.has_value(); }

  // Whether a parameter's second moment is factored (two or more dimensions).
  static bool factored(const torch::Tensor& p) { return p.dim() >= 2; }

 protected:
  std::vector<StateKind*> stateKinds() override { return {&expAvg_, &expAvgSqRow_, &expAvgSqCol_, &expAvgSq_}; }

 private:
  // The relative step size for the current step count (0-dim float32), or the group's lr.
  torch::Tensor stepSize(size_t group) const;
  // Updates `p` (the parameter, or its device copy) from `grad` with parameter [group][index]'s state.
  void update(size_t group, size_t index, torch::Tensor& p, const torch::Tensor& grad, const torch::Tensor& stepSize,
              const torch::Tensor& beta2t);
  torch::Tensor beta2t() const;
  AdafactorHyperparameters hyper_;
  bool stochasticRounding_;
  std::vector<torch::Tensor> stepSizes_;  // per group, for the current step (advanceStep)
  torch::Tensor beta2t_;
  StateKind expAvg_{"exp_avg", {}}, expAvgSqRow_{"exp_avg_sq_row", {}}, expAvgSqCol_{"exp_avg_sq_col", {}},
      expAvgSq_{"exp_avg_sq", {}};
};

}  // namespace sinter::train

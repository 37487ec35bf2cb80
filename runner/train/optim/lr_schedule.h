#pragma once
// Learning-rate schedules with diffusers' get_scheduler formulas (sd-scripts' get_scheduler_fix
// uses them): constant, constant_with_warmup, linear, cosine (half a cycle), cosine_with_restarts
// (num_cycles), polynomial (power, lr_end 1e-7), and adafactor (transformers' AdafactorSchedule:
// Adafactor's relative step sets the rate, the schedule leaves it alone). The factor for the next step is computed from the
// optimizer's device step tensor into its device lr tensors (no host values), and on the host for
// tests and logging.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "train/optim/optimizer_args.h"

namespace sinter::train {

class Optimizer;

enum class LrSchedulerType { Constant, ConstantWithWarmup, Linear, Cosine, CosineWithRestarts, Polynomial, Adafactor };
// The names sd-scripts accepts; anything else is std::invalid_argument listing them.
LrSchedulerType parseLrSchedulerType(const std::string& name);
const std::vector<std::string>& lrSchedulerNames();
// lr_scheduler for this optimizer, as sd-scripts resolves it: Adafactor with relative_step uses
// the adafactor schedule whatever is named (`switched` says so), and the adafactor schedule needs
// it. A mismatch is std::invalid_argument naming lr_scheduler.
LrSchedulerType resolveLrScheduler(const std::string& name, const OptimizerSettings& optimizer, bool* switched = nullptr);

// lr_warmup_steps: a whole number of steps, or a fraction in (0, 1) of the total steps.
int64_t resolveWarmupSteps(double lrWarmupSteps, int64_t totalSteps);

struct LrScheduleOptions {
  LrSchedulerType type = LrSchedulerType::Constant;
  int64_t warmupSteps = 0;
  int64_t totalSteps = 1;       // max_train_steps (x processes)
  int64_t numCycles = 1;        // lr_scheduler_num_cycles (cosine_with_restarts)
  double power = 1.0;           // lr_scheduler_power (polynomial)
  double lrEnd = 1e-7;          // diffusers' polynomial default
  double initialLr = 0.0;       // polynomial: the optimizer's default lr (learning_rate)
};

class LrSchedule {
 public:
  explicit LrSchedule(LrScheduleOptions options);  // validates (e.g. constant with warmup)
  const LrScheduleOptions& options() const { return options_; }

  // The multiplier of the base lr after `step` completed optimizer steps (diffusers' lr_lambda).
  double factor(int64_t step) const;
  // The same on the device: `step` is a 0-dim tensor; returns a 0-dim float64 tensor.
  torch::Tensor factor(const torch::Tensor& step) const;
  // Writes base_lr * factor(stepCount) into each group's lr tensor (call before optimizer.step()).
  void apply(Optimizer& optimizer) const;

 private:
  LrScheduleOptions options_;
};

}  // namespace sinter::train

#pragma once
// Learning-rate schedules as sd-scripts' get_scheduler_fix builds them: lr_scheduler names the
// schedules of diffusers/transformers (constant, constant_with_warmup, linear, cosine (half a
// wave, or lr_scheduler_args num_cycles), cosine_with_restarts (lr_scheduler_num_cycles),
// polynomial (lr_scheduler_power, lr_end 1e-7 or lr_scheduler_args lr_end), inverse_sqrt
// (lr_scheduler_timescale), cosine_with_min_lr (lr_scheduler_min_lr_ratio or lr_scheduler_args
// min_lr; num_cycles / 2 waves), warmup_stable_decay (lr_decay_steps, lr_scheduler_min_lr_ratio,
// lr_scheduler_args warmup_type / decay_type), piecewise_constant (lr_scheduler_args step_rules),
// adafactor (transformers' AdafactorSchedule: Adafactor's relative step sets the rate, the
// schedule leaves it alone)), and lr_scheduler_type a torch.optim.lr_scheduler class
// (torch_lr_schedulers.h), which replaces lr_scheduler. Each is a function of the optimizer's
// completed steps; on the device the rates are read from a table of them, indexed by the
// optimizer's device step count (no host value per step, so a graph can capture it).
#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "train/optim/lr_scheduler_args.h"
#include "train/optim/optimizer_args.h"
#include "train/optim/torch_lr_schedulers.h"

namespace sinter::train {

class Optimizer;

enum class LrSchedulerType {
  Constant, ConstantWithWarmup, Linear, Cosine, CosineWithRestarts, Polynomial, Adafactor,
  InverseSqrt, CosineWithMinLr, WarmupStableDecay, PiecewiseConstant
};
// The names sd-scripts accepts and this build has; anything else is std::invalid_argument listing
// them (with the reason for the two transformers names sd-scripts fails on).
LrSchedulerType parseLrSchedulerType(const std::string& name);
const std::vector<std::string>& lrSchedulerNames();
// lr_scheduler for this optimizer, as sd-scripts resolves it: Adafactor with relative_step uses
// the adafactor schedule whatever is named (`switched` says so), and the adafactor schedule needs
// it. A mismatch is std::invalid_argument naming lr_scheduler.
LrSchedulerType resolveLrScheduler(const std::string& name, const OptimizerSettings& optimizer, bool* switched = nullptr);

// lr_warmup_steps / lr_decay_steps: a whole number of steps, or a fraction in (0, 1) of the total
// steps (`key` names the option in errors).
int64_t resolveWarmupSteps(double lrWarmupSteps, int64_t totalSteps, const char* key = "lr_warmup_steps");

struct LrScheduleOptions {
  LrSchedulerType type = LrSchedulerType::Constant;
  int64_t warmupSteps = 0;
  int64_t totalSteps = 1;       // max_train_steps
  int64_t numCycles = 1;        // lr_scheduler_num_cycles (cosine_with_restarts; cosine_with_min_lr and warmup_stable_decay halve it)
  double power = 1.0;           // lr_scheduler_power (polynomial)
  double lrEnd = 1e-7;          // polynomial: diffusers' default, or lr_scheduler_args lr_end
  double initialLr = 0.0;       // polynomial, cosine_with_min_lr's min_lr: the optimizer's default lr (learning_rate)
  double cosineCycles = 0.5;    // cosine: lr_scheduler_args num_cycles
  std::optional<double> minLrRatio;  // lr_scheduler_min_lr_ratio
  std::optional<double> minLr;       // cosine_with_min_lr: lr_scheduler_args min_lr (absolute)
  int64_t decaySteps = 0;            // lr_decay_steps, resolved (warmup_stable_decay)
  std::optional<int64_t> timescale;  // lr_scheduler_timescale (inverse_sqrt; unset: the warmup steps, or 10000)
  std::string warmupShape = "linear", decayShape = "cosine";  // warmup_stable_decay's warmup_type, decay_type
  std::optional<std::string> stepRules;  // piecewise_constant's step_rules
  std::optional<TorchLrScheduler> torchScheduler;  // lr_scheduler_type
  int64_t lastStep = 0;  // the most completed steps the device table covers (0: totalSteps); past it the rate holds
};

// lr_scheduler_args applied to the named (not lr_scheduler_type) schedule: the keyword arguments
// sd-scripts passes on to it that its function takes; another is std::invalid_argument naming it.
void applyLrSchedulerArgs(LrScheduleOptions& options, const std::vector<SchedulerArg>& args);

class LrSchedule {
 public:
  explicit LrSchedule(LrScheduleOptions options);  // validates (e.g. constant with warmup)
  const LrScheduleOptions& options() const { return options_; }

  // The rate after `step` completed optimizer steps: base_lr * scale + offset.
  LrValue at(int64_t step) const;
  // The multiplier of the base lr (diffusers' lr_lambda); schedules with an absolute part (eta_min,
  // OneCycleLR) need learningRate().
  double factor(int64_t step) const { return at(step).scale; }
  double learningRate(double baseLr, int64_t step) const;
  // The multiplier on the device: `step` is a 0-dim tensor; returns a 0-dim float64 tensor.
  torch::Tensor factor(const torch::Tensor& step) const;
  // Puts the table of rates on `device` (before any graph capture reads it).
  void prepare(torch::Device device) const;
  // Writes base_lr * scale + offset at stepCount into each group's lr tensor (call before optimizer.step()).
  void apply(Optimizer& optimizer) const;

 private:
  struct Table {
    torch::Device device = torch::kCPU;
    torch::Tensor scale, offset;  // float64, [lastStep + 1]
  };
  const Table& tableOn(torch::Device device) const;
  LrScheduleOptions options_;
  double minRate_ = 0.0;  // cosine_with_min_lr, warmup_stable_decay: the lowest multiplier
  std::vector<std::pair<int64_t, double>> rules_;  // piecewise_constant: below each step, its multiplier
  double lastMultiple_ = 1.0;
  mutable std::optional<Table> table_;
};

}  // namespace sinter::train

#pragma once
// What the loop reports of each step once its loss is read back (a step late, loss_readback.h): the
// Step event and the progress line, the TensorBoard log (each group's learning rate after the step,
// and D-Adaptation's or Prodigy's step size, read back a step late as the loss is), the uncaptured
// run's first step as warm-up, and vram_budget_gb's check of the start's peak and then the step's
// (base/vram_budget.h; rank 0 reports them).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "train/base/vram_budget.h"
#include "train/loop/loss_readback.h"
#include "train/loop/progress_meter.h"
#include "train/loop/training_log.h"
#include "train/loop/warmup_clock.h"
#include "train/optim/lr_schedule.h"
#include "train/optim/optimizer.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// What the loop knows of a step when it ends, before its loss is read.
struct StepFacts {
  long long epoch = 0;  // 0-based
  double lr = 0;        // the first group's, during the step
  double seconds = 0;   // its time, less saves, samples and captures
  std::string signature;
};

class StepReports {
 public:
  // Made right before step 1: the start's peak memory (loading, caches, warm-up, samples before
  // training) is reported here, and the peak measured again from here on is the steps'.
  StepReports(const RunContext& run, Optimizer& optimizer, const LrSchedule& schedule, TrainingLog& log, ProgressMeter& meter,
              std::vector<std::string> figureNames, long long maxTrainSteps, long long startStep, bool firstStepIsWarmup);

  // A step ended: its loss and figures (device tensors, read later) and facts; `scheduleStep` is
  // the lr schedule's step after it.
  void push(long long step, long long scheduleStep, const torch::Tensor& loss, const torch::Tensor& figures, const StepFacts& facts);
  // Reports the steps whose losses are read: all of them, or all but the newest (still in flight).
  void report(bool includeNewest, WarmupClock& clock);
  // The progress line is drawn in place on a terminal: a line of its own ends it before other output.
  void endLine() const;

 private:
  struct Pending {
    StepFacts facts;
    std::vector<double> loggedLrs;  // each group's, after the step (the TensorBoard log's)
  };
  const RunContext& run_;
  Optimizer& optimizer_;
  const LrSchedule& schedule_;
  TrainingLog& log_;
  ProgressMeter& meter_;
  std::vector<std::string> figureNames_;
  long long maxTrainSteps_, startStep_;
  bool firstStepIsWarmup_;
  bool progressLine_;
  std::optional<VramBudgetCheck> vramBudget_;
  double firstStepPeakBytes_ = 0;  // the allocator's peak when step 1 was pushed
  std::optional<torch::Tensor> stepSizeEstimate_;
  LossReadback losses_, stepSizes_;
  std::map<long long, Pending> unreported_;
};

}  // namespace sinter::train

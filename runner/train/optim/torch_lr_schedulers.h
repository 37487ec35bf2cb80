#pragma once
// lr_scheduler_type: sd-scripts instantiates any scheduler class by its dotted name with
// lr_scheduler_args as keyword arguments, stepped once per optimizer step. Sinter runs no Python;
// it has the torch.optim.lr_scheduler classes people use natively, with PyTorch's argument names,
// defaults and checks, computed from their closed forms (PyTorch's documented formulas) at the
// number of scheduler steps taken:
//   StepLR, MultiStepLR, ExponentialLR, ConstantLR, LinearLR, PolynomialLR, CosineAnnealingLR,
//   CosineAnnealingWarmRestarts, OneCycleLR (without momentum cycling: cycle_momentum=False).
// Sinter counts a scheduler step per optimizer step whatever the number of ranks, as its own
// schedules do (sd-scripts' accelerate steps the scheduler once per process).
#include <string>
#include <vector>

#include "train/optim/lr_scheduler_args.h"

namespace sinter::train {

// The learning rate at a step as base_lr * scale + offset: the part proportional to a group's
// base rate, and the absolute one (eta_min, OneCycleLR's rates).
struct LrValue {
  double scale = 1.0;
  double offset = 0.0;
};

enum class TorchSchedulerKind {
  StepLR, MultiStepLR, ExponentialLR, ConstantLR, LinearLR, PolynomialLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, OneCycleLR
};

struct TorchLrScheduler {
  TorchSchedulerKind kind = TorchSchedulerKind::StepLR;
  std::string name;  // the class name, "StepLR"
  long long stepSize = 1;              // StepLR
  double gamma = 0.1;                  // StepLR, MultiStepLR, ExponentialLR
  std::vector<double> milestones;      // MultiStepLR, sorted
  double factor = 1.0 / 3.0;           // ConstantLR
  long long totalIters = 5;            // ConstantLR, LinearLR, PolynomialLR
  double startFactor = 1.0 / 3.0, endFactor = 1.0;  // LinearLR
  double power = 1.0;                  // PolynomialLR
  double tMax = 1;                     // CosineAnnealingLR
  double etaMin = 0.0;                 // CosineAnnealingLR, CosineAnnealingWarmRestarts
  long long t0 = 1, tMult = 1;         // CosineAnnealingWarmRestarts
  // OneCycleLR
  double maxLr = 0;
  long long totalSteps = 0;
  double pctStart = 0.3;
  bool annealCos = true;
  double divFactor = 25.0, finalDivFactor = 1e4;
  bool threePhase = false;

  // The rate after `step` scheduler steps (PyTorch's last_epoch).
  LrValue at(long long step) const;
};

// The classes this build has, by their short names.
const std::vector<std::string>& torchLrSchedulerNames();
// lr_scheduler_type ("CosineAnnealingLR" or "torch.optim.lr_scheduler.CosineAnnealingLR") with its
// lr_scheduler_args, checked as PyTorch checks them; anything else is std::invalid_argument naming
// the value and listing what this build has.
TorchLrScheduler parseTorchLrScheduler(const std::string& type, const std::vector<SchedulerArg>& args);

}  // namespace sinter::train

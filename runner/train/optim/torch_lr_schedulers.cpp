#include "train/optim/torch_lr_schedulers.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sinter::train {

namespace {

constexpr const char* kModule = "torch.optim.lr_scheduler.";

// Classes of torch.optim.lr_scheduler this build does not have, and why.
std::string unbuiltReason(const std::string& name) {
  if (name == "LambdaLR" || name == "MultiplicativeLR") return name + " takes a Python function, which a native runner cannot run";
  if (name == "ReduceLROnPlateau")
    return "ReduceLROnPlateau steps on a metric, and sd-scripts steps schedulers without one (it fails there too)";
  if (name == "CyclicLR") return "CyclicLR is not in this build";
  if (name == "SequentialLR" || name == "ChainedScheduler") return name + " takes other scheduler objects, which a config cannot give";
  return "";
}

double phaseAnneal(bool cosine, double start, double end, double pct) {
  if (cosine) return end + (start - end) / 2.0 * (std::cos(M_PI * pct) + 1.0);
  return (end - start) * pct + start;
}

}  // namespace

const std::vector<std::string>& torchLrSchedulerNames() {
  static const std::vector<std::string> names = {"StepLR",   "MultiStepLR",        "ExponentialLR",
                                                 "ConstantLR", "LinearLR",         "PolynomialLR",
                                                 "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "OneCycleLR"};
  return names;
}

LrValue TorchLrScheduler::at(long long stepInt) const {
  const double t = static_cast<double>(std::max(0LL, stepInt));
  switch (kind) {
    case TorchSchedulerKind::StepLR: return {std::pow(gamma, std::floor(t / static_cast<double>(stepSize))), 0.0};
    case TorchSchedulerKind::MultiStepLR: {
      // bisect_right(milestones, t): the milestones reached (a repeated one counts each time).
      const auto passed = std::upper_bound(milestones.begin(), milestones.end(), t) - milestones.begin();
      return {std::pow(gamma, static_cast<double>(passed)), 0.0};
    }
    case TorchSchedulerKind::ExponentialLR: return {std::pow(gamma, t), 0.0};
    case TorchSchedulerKind::ConstantLR: return {t < static_cast<double>(totalIters) ? factor : 1.0, 0.0};
    case TorchSchedulerKind::LinearLR:
      return {startFactor + (endFactor - startFactor) * std::min(static_cast<double>(totalIters), t) / static_cast<double>(totalIters), 0.0};
    case TorchSchedulerKind::PolynomialLR:
      return {std::pow(1.0 - std::min(static_cast<double>(totalIters), t) / static_cast<double>(totalIters), power), 0.0};
    case TorchSchedulerKind::CosineAnnealingLR: {
      // eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2
      const double c = (1.0 + std::cos(M_PI * t / tMax)) / 2.0;
      return {c, etaMin * (1.0 - c)};
    }
    case TorchSchedulerKind::CosineAnnealingWarmRestarts: {
      // T_cur counts the steps since the last restart; each period is T_mult times the last.
      double tCur = t, tI = static_cast<double>(t0);
      if (tMult == 1) {
        tCur = std::fmod(t, tI);
      } else {
        while (tCur >= tI) {
          tCur -= tI;
          tI *= static_cast<double>(tMult);
        }
      }
      const double c = (1.0 + std::cos(M_PI * tCur / tI)) / 2.0;
      return {c, etaMin * (1.0 - c)};
    }
    case TorchSchedulerKind::OneCycleLR: {
      // PyTorch's phases; past total_steps the rate stays where accelerate stops stepping it.
      const double step = std::min(t, static_cast<double>(totalSteps));
      const double initial = maxLr / divFactor, minimum = initial / finalDivFactor;
      const double total = static_cast<double>(totalSteps);
      struct Phase {
        double end, from, to;
      };
      std::vector<Phase> phases;
      if (threePhase)
        phases = {{pctStart * total - 1, initial, maxLr}, {2 * pctStart * total - 2, maxLr, initial}, {total - 1, initial, minimum}};
      else
        phases = {{pctStart * total - 1, initial, maxLr}, {total - 1, maxLr, minimum}};
      double start = 0;
      for (size_t i = 0; i < phases.size(); ++i) {
        if (step <= phases[i].end || i + 1 == phases.size())
          return {0.0, phaseAnneal(annealCos, phases[i].from, phases[i].to, (step - start) / (phases[i].end - start))};
        start = phases[i].end;
      }
      return {0.0, minimum};
    }
  }
  return {};
}

TorchLrScheduler parseTorchLrScheduler(const std::string& type, const std::vector<SchedulerArg>& rawArgs) {
  std::string name = type;
  if (name.rfind(kModule, 0) == 0) name = name.substr(std::string(kModule).size());
  std::string list;
  for (const std::string& n : torchLrSchedulerNames()) list += (list.empty() ? "" : ", ") + n;
  const auto known = std::find(torchLrSchedulerNames().begin(), torchLrSchedulerNames().end(), name);
  if (known == torchLrSchedulerNames().end()) {
    std::string why;
    if (name.find('.') != std::string::npos)
      why = "sd-scripts imports that class from Python; Sinter runs no Python and has only torch.optim.lr_scheduler's classes natively";
    else if (const std::string reason = unbuiltReason(name); !reason.empty())
      why = reason;
    else
      why = "not a class this build has";
    throw std::invalid_argument("lr_scheduler_type '" + type + "': " + why + " (available, with or without the torch.optim.lr_scheduler. "
                                "prefix: " + list + ")");
  }
  TorchLrScheduler s;
  s.name = name;
  s.kind = static_cast<TorchSchedulerKind>(known - torchLrSchedulerNames().begin());
  const SchedulerArgs args(rawArgs, name);
  auto required = [&](const std::string& key) {
    if (!args.has(key)) throw std::invalid_argument("lr_scheduler_type " + name + " needs " + key + " in lr_scheduler_args (e.g. " + key + "=100)");
  };
  auto positiveInt = [&](const std::string& key, long long& dst) {
    if (auto v = args.integer(key)) dst = *v;
    if (dst < 1) args.fail(key, key + " must be a positive int");
  };
  switch (s.kind) {
    case TorchSchedulerKind::StepLR:
      args.requireKnown({"step_size", "gamma"});
      required("step_size");
      positiveInt("step_size", s.stepSize);
      s.gamma = args.number("gamma").value_or(0.1);
      break;
    case TorchSchedulerKind::MultiStepLR:
      args.requireKnown({"milestones", "gamma"});
      required("milestones");
      s.milestones = *args.numbers("milestones");
      std::sort(s.milestones.begin(), s.milestones.end());
      s.gamma = args.number("gamma").value_or(0.1);
      break;
    case TorchSchedulerKind::ExponentialLR:
      args.requireKnown({"gamma"});
      required("gamma");
      s.gamma = *args.number("gamma");
      break;
    case TorchSchedulerKind::ConstantLR:
      args.requireKnown({"factor", "total_iters"});
      s.factor = args.number("factor").value_or(1.0 / 3.0);
      if (s.factor < 0 || s.factor > 1) args.fail("factor", "Constant multiplicative factor expected to be between 0 and 1.");
      s.totalIters = args.integer("total_iters").value_or(5);
      if (s.totalIters < 0) args.fail("total_iters", "total_iters must not be negative");
      break;
    case TorchSchedulerKind::LinearLR:
      args.requireKnown({"start_factor", "end_factor", "total_iters"});
      s.startFactor = args.number("start_factor").value_or(1.0 / 3.0);
      s.endFactor = args.number("end_factor").value_or(1.0);
      if (s.startFactor <= 0 || s.startFactor > 1)
        args.fail("start_factor", "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.");
      if (s.endFactor < 0 || s.endFactor > 1) args.fail("end_factor", "Ending multiplicative factor expected to be between 0 and 1.");
      positiveInt("total_iters", s.totalIters);
      break;
    case TorchSchedulerKind::PolynomialLR:
      args.requireKnown({"total_iters", "power"});
      positiveInt("total_iters", s.totalIters);
      s.power = args.number("power").value_or(1.0);
      break;
    case TorchSchedulerKind::CosineAnnealingLR:
      args.requireKnown({"T_max", "eta_min"});
      required("T_max");
      s.tMax = *args.number("T_max");
      if (s.tMax <= 0) args.fail("T_max", "T_max must be above 0");
      s.etaMin = args.number("eta_min").value_or(0.0);
      break;
    case TorchSchedulerKind::CosineAnnealingWarmRestarts:
      args.requireKnown({"T_0", "T_mult", "eta_min"});
      required("T_0");
      s.t0 = 0;
      if (auto v = args.integer("T_0")) s.t0 = *v;
      if (s.t0 < 1) args.fail("T_0", "Expected positive integer T_0");
      if (auto v = args.integer("T_mult")) s.tMult = *v;
      if (s.tMult < 1) args.fail("T_mult", "Expected integer T_mult >= 1");
      s.etaMin = args.number("eta_min").value_or(0.0);
      break;
    case TorchSchedulerKind::OneCycleLR: {
      args.requireKnown({"max_lr", "total_steps", "epochs", "steps_per_epoch", "pct_start", "anneal_strategy", "cycle_momentum",
                         "base_momentum", "max_momentum", "div_factor", "final_div_factor", "three_phase"});
      required("max_lr");
      if (const SchedulerArg* m = args.find("max_lr"); m && m->kind == SchedulerArg::Kind::List)
        args.fail("max_lr", "one max_lr per parameter group is not supported (Sinter's groups are not in sd-scripts' order): give "
                            "one number");
      s.maxLr = *args.number("max_lr");
      if (auto total = args.integer("total_steps")) {
        s.totalSteps = *total;
        if (s.totalSteps < 1) args.fail("total_steps", "Expected positive integer total_steps");
      } else if (args.has("epochs") || args.has("steps_per_epoch")) {
        long long epochs = 0, perEpoch = 0;
        if (auto v = args.integer("epochs")) epochs = *v;
        if (auto v = args.integer("steps_per_epoch")) perEpoch = *v;
        if (epochs < 1) throw std::invalid_argument("lr_scheduler_args: OneCycleLR needs epochs as a positive int with steps_per_epoch");
        if (perEpoch < 1) throw std::invalid_argument("lr_scheduler_args: OneCycleLR needs steps_per_epoch as a positive int with epochs");
        s.totalSteps = epochs * perEpoch;
      } else {
        throw std::invalid_argument("lr_scheduler_type OneCycleLR needs total_steps, or epochs and steps_per_epoch, in lr_scheduler_args");
      }
      s.pctStart = args.number("pct_start").value_or(0.3);
      if (s.pctStart < 0 || s.pctStart > 1) args.fail("pct_start", "Expected float between 0 and 1 pct_start");
      const std::string anneal = args.string("anneal_strategy").value_or("cos");
      if (anneal != "cos" && anneal != "linear") args.fail("anneal_strategy", "anneal_strategy must be one of 'cos' or 'linear'");
      s.annealCos = anneal == "cos";
      if (args.boolean("cycle_momentum").value_or(true))
        throw std::invalid_argument("lr_scheduler_type OneCycleLR: its momentum cycling (cycle_momentum=True, the default) is not in "
                                    "this build, which schedules learning rates only: add cycle_momentum=False to lr_scheduler_args");
      s.divFactor = args.number("div_factor").value_or(25.0);
      s.finalDivFactor = args.number("final_div_factor").value_or(1e4);
      if (s.divFactor == 0 || s.finalDivFactor == 0) throw std::invalid_argument("lr_scheduler_args: OneCycleLR's div_factor and final_div_factor must not be 0");
      s.threePhase = args.boolean("three_phase").value_or(false);
      // A phase of no steps divides by zero in PyTorch.
      const double total = static_cast<double>(s.totalSteps);
      const double firstEnd = s.pctStart * total - 1;
      const bool empty = s.threePhase ? (firstEnd == 0 || firstEnd == 2 * s.pctStart * total - 2 || 2 * s.pctStart * total - 2 == total - 1)
                                      : (firstEnd == 0 || firstEnd == total - 1);
      if (empty)
        throw std::invalid_argument("lr_scheduler_args: OneCycleLR with total_steps " + std::to_string(s.totalSteps) + " and pct_start " +
                                    std::to_string(s.pctStart) + " has a phase of no length (PyTorch divides by zero there)");
      break;
    }
  }
  return s;
}

}  // namespace sinter::train

#include "train/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

#include "core/ascii_text.h"
#include "train/optim/optimizer.h"

namespace sinter::train {

namespace {

// diffusers' get_piecewise_constant_schedule: "1:10,0.1:20,0.005" is 1 below step 10, 0.1 below
// step 20, then 0.005.
void parseStepRules(const std::string& rules, std::vector<std::pair<int64_t, double>>& out, double& last) {
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("lr_scheduler_args: step_rules '" + rules + "': " + why +
                                 " (e.g. step_rules='1:10,0.1:20,0.01:30,0.005': 1 below step 10, 0.1 below 20, 0.01 below 30, then 0.005)");
  };
  std::vector<std::string> parts;
  std::stringstream ss(rules);
  for (std::string part; std::getline(ss, part, ',');) parts.push_back(trimAscii(part));
  if (parts.empty()) throw bad("no rules");
  auto number = [&](const std::string& text) {
    try {
      size_t used = 0;
      const double v = std::stod(text, &used);
      if (used == text.size() && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
    throw bad("'" + text + "' is not a number");
  };
  std::map<int64_t, double> byStep;  // a repeated step keeps its last multiplier, as the dict does
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const size_t colon = parts[i].find(':');
    if (colon == std::string::npos || parts[i].find(':', colon + 1) != std::string::npos) throw bad("'" + parts[i] + "' is not multiplier:step");
    const std::string step = trimAscii(parts[i].substr(colon + 1));
    if (step.empty() || step.find_first_not_of("0123456789+-") != std::string::npos) throw bad("'" + step + "' is not a whole step");
    byStep[std::stoll(step)] = number(trimAscii(parts[i].substr(0, colon)));
  }
  last = number(parts.back());
  out.assign(byStep.begin(), byStep.end());
}

double warmupOrDecayShape(const std::string& shape, double progress, bool warmup, double cycles) {
  if (shape == "linear") return warmup ? progress : 1.0 - progress;
  if (shape == "cosine") return warmup ? 0.5 * (1.0 - std::cos(M_PI * progress)) : 0.5 * (1.0 + std::cos(M_PI * cycles * 2.0 * progress));
  return warmup ? 1.0 - std::sqrt(1.0 - progress) : 1.0 - std::sqrt(progress);  // "1-sqrt"
}

}  // namespace

const std::vector<std::string>& lrSchedulerNames() {
  static const std::vector<std::string> names = {"constant",     "constant_with_warmup", "linear",           "cosine",
                                                 "cosine_with_restarts", "polynomial", "adafactor",        "inverse_sqrt",
                                                 "cosine_with_min_lr",   "warmup_stable_decay", "piecewise_constant"};
  return names;
}

LrSchedulerType parseLrSchedulerType(const std::string& name) {
  const auto& names = lrSchedulerNames();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<LrSchedulerType>(i);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  if (name == "reduce_lr_on_plateau")
    throw std::invalid_argument("lr_scheduler 'reduce_lr_on_plateau' steps on a metric, and sd-scripts hands it num_warmup_steps and "
                                "num_training_steps, which it does not take (it fails there); available: " + list);
  if (name == "cosine_warmup_with_min_lr")
    throw std::invalid_argument("lr_scheduler 'cosine_warmup_with_min_lr': sd-scripts hands it num_decay_steps, which it does not take "
                                "(it fails there); cosine_with_min_lr is the one that works (available: " + list + ")");
  throw std::invalid_argument("lr_scheduler '" + name + "' is not available in this build (available: " + list + ")");
}

LrSchedulerType resolveLrScheduler(const std::string& name, const OptimizerSettings& optimizer, bool* switched) {
  const LrSchedulerType named = parseLrSchedulerType(name);
  const bool relative = optimizer.type == "Adafactor" && optimizer.adafactor.relativeStep;
  if (switched) *switched = relative && named != LrSchedulerType::Adafactor;
  if (relative) return LrSchedulerType::Adafactor;
  if (named == LrSchedulerType::Adafactor)
    throw std::invalid_argument(optimizer.type == "Adafactor"
                                    ? "lr_scheduler 'adafactor' follows Adafactor's relative step: set relative_step=True in "
                                      "optimizer_args, or choose another lr_scheduler"
                                    : "lr_scheduler 'adafactor' needs optimizer_type Adafactor (it is " + optimizer.type + ")");
  return named;
}

int64_t resolveWarmupSteps(double steps, int64_t totalSteps, const char* key) {
  const std::string k = key;
  if (steps < 0) throw std::invalid_argument(k + " must not be negative");
  if (steps > 0 && steps < 1) return static_cast<int64_t>(steps * static_cast<double>(totalSteps));
  if (steps != std::floor(steps)) throw std::invalid_argument(k + " must be a whole number of steps or a ratio below 1");
  return static_cast<int64_t>(steps);
}

void applyLrSchedulerArgs(LrScheduleOptions& o, const std::vector<SchedulerArg>& raw) {
  if (o.type == LrSchedulerType::Adafactor) return;  // sd-scripts builds AdafactorSchedule without them
  const SchedulerArgs args(raw, "lr_scheduler " + lrSchedulerNames()[static_cast<size_t>(o.type)]);
  // What each function takes besides what sd-scripts passes itself (num_warmup_steps,
  // num_training_steps, num_cycles, power, timescale, min_lr_rate...).
  switch (o.type) {
    case LrSchedulerType::Cosine:
      args.requireKnown({"num_cycles"});
      o.cosineCycles = args.number("num_cycles").value_or(o.cosineCycles);
      break;
    case LrSchedulerType::Polynomial:
      args.requireKnown({"lr_end"});
      o.lrEnd = args.number("lr_end").value_or(o.lrEnd);
      break;
    case LrSchedulerType::CosineWithMinLr:
      args.requireKnown({"min_lr"});
      o.minLr = args.number("min_lr");
      break;
    case LrSchedulerType::WarmupStableDecay:
      args.requireKnown({"warmup_type", "decay_type"});
      for (const char* key : {"warmup_type", "decay_type"}) {
        const auto shape = args.string(key);
        if (!shape) continue;
        if (*shape != "linear" && *shape != "cosine" && *shape != "1-sqrt")
          args.fail(key, std::string(key) + " must be 'linear', 'cosine' or '1-sqrt'");
        (std::string(key) == "warmup_type" ? o.warmupShape : o.decayShape) = *shape;
      }
      break;
    case LrSchedulerType::PiecewiseConstant:
      args.requireKnown({"step_rules"});
      o.stepRules = args.string("step_rules");
      break;
    default: args.requireKnown({});
  }
}

LrSchedule::LrSchedule(LrScheduleOptions options) : options_(std::move(options)) {
  const LrScheduleOptions& o = options_;
  if (o.totalSteps < 1) throw std::invalid_argument("the lr schedule needs at least one step");
  if (o.torchScheduler) {
    // sd-scripts: "<name> does not require `num_warmup_steps`. Set None or 0."
    if (o.warmupSteps != 0)
      throw std::invalid_argument("lr_scheduler_type " + o.torchScheduler->name + " does not take lr_warmup_steps: set it to 0");
    return;
  }
  if (o.type == LrSchedulerType::Constant && o.warmupSteps != 0)
    throw std::invalid_argument("lr_scheduler constant does not take lr_warmup_steps (use constant_with_warmup)");
  if (o.type == LrSchedulerType::Adafactor && o.warmupSteps != 0)
    throw std::invalid_argument("lr_scheduler adafactor does not take lr_warmup_steps (Adafactor's relative step warms up "
                                "with warmup_init=True)");
  if (o.type == LrSchedulerType::CosineWithRestarts && o.numCycles < 1)
    throw std::invalid_argument("lr_scheduler_num_cycles must be at least 1");
  if (o.type == LrSchedulerType::Polynomial && !(o.initialLr > o.lrEnd))
    throw std::invalid_argument("polynomial lr_scheduler: learning_rate must be above lr_end (" + std::to_string(o.lrEnd) + ")");
  if (o.type == LrSchedulerType::InverseSqrt) {
    if (!options_.timescale) options_.timescale = o.warmupSteps > 0 ? o.warmupSteps : 10000;  // transformers' default
    if (*options_.timescale < 1) throw std::invalid_argument("lr_scheduler_timescale must be at least 1");
  }
  if (o.type == LrSchedulerType::CosineWithMinLr) {
    // transformers: "Only one of min_lr or min_lr_rate should be set"; min_lr is a share of the default lr.
    if (o.minLr && o.minLrRatio)
      throw std::invalid_argument("cosine_with_min_lr takes lr_scheduler_min_lr_ratio or lr_scheduler_args min_lr, not both");
    if (!o.minLr && !o.minLrRatio)
      throw std::invalid_argument("lr_scheduler cosine_with_min_lr needs lr_scheduler_min_lr_ratio (or min_lr in lr_scheduler_args)");
    if (o.minLr && !(o.initialLr > 0)) throw std::invalid_argument("cosine_with_min_lr: min_lr needs a learning_rate above 0");
    minRate_ = o.minLr ? *o.minLr / o.initialLr : *o.minLrRatio;
  }
  if (o.type == LrSchedulerType::WarmupStableDecay) {
    if (o.decaySteps < 0) throw std::invalid_argument("lr_decay_steps must not be negative");
    minRate_ = o.minLrRatio.value_or(0.0);
  }
  if (o.type == LrSchedulerType::PiecewiseConstant) {
    if (!o.stepRules)
      throw std::invalid_argument("lr_scheduler piecewise_constant needs step_rules in lr_scheduler_args, e.g. "
                                  "step_rules='1:10,0.1:20,0.01:30,0.005'");
    parseStepRules(*o.stepRules, rules_, lastMultiple_);
  }
}

LrValue LrSchedule::at(int64_t stepInt) const {
  const LrScheduleOptions& o = options_;
  if (o.torchScheduler) return o.torchScheduler->at(stepInt);
  const double s = static_cast<double>(stepInt);
  const double w = static_cast<double>(o.warmupSteps);
  const double t = static_cast<double>(o.totalSteps);
  auto scale = [](double v) { return LrValue{v, 0.0}; };
  switch (o.type) {
    case LrSchedulerType::Constant:
    case LrSchedulerType::Adafactor: return scale(1.0);
    case LrSchedulerType::PiecewiseConstant:
      for (const auto& [step, multiple] : rules_)
        if (stepInt < step) return scale(multiple);
      return scale(lastMultiple_);
    case LrSchedulerType::WarmupStableDecay: {
      // transformers' get_wsd_schedule with num_stable_steps = total - warmup - decay.
      const double d = static_cast<double>(o.decaySteps), stable = t - w - d;
      const double cycles = static_cast<double>(o.numCycles) / 2.0;
      if (s < w) return scale(std::max(0.0, warmupOrDecayShape(o.warmupShape, s / std::max(1.0, w), true, cycles) * (1.0 - minRate_) + minRate_));
      if (s < w + stable) return scale(1.0);
      if (s < w + stable + d)
        return scale(std::max(0.0, warmupOrDecayShape(o.decayShape, (s - w - stable) / std::max(1.0, d), false, cycles) * (1.0 - minRate_) + minRate_));
      return scale(minRate_);
    }
    default: break;
  }
  if (s < w) return scale(s / std::max(1.0, w));
  const double progress = (s - w) / std::max(1.0, t - w);
  switch (o.type) {
    case LrSchedulerType::ConstantWithWarmup: return scale(1.0);
    case LrSchedulerType::Linear: return scale(std::max(0.0, (t - s) / std::max(1.0, t - w)));
    case LrSchedulerType::Cosine: return scale(std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * o.cosineCycles * 2.0 * progress))));
    case LrSchedulerType::CosineWithRestarts:
      if (progress >= 1.0) return scale(0.0);
      return scale(std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * std::fmod(static_cast<double>(o.numCycles) * progress, 1.0)))));
    case LrSchedulerType::Polynomial: {
      if (s > t) return scale(o.lrEnd / o.initialLr);
      const double remaining = 1.0 - (s - w) / std::max(1.0, t - w);
      return scale(((o.initialLr - o.lrEnd) * std::pow(remaining, o.power) + o.lrEnd) / o.initialLr);
    }
    case LrSchedulerType::InverseSqrt: {
      const double timescale = static_cast<double>(*o.timescale);
      return scale(1.0 / std::sqrt((s + timescale - w) / timescale));
    }
    case LrSchedulerType::CosineWithMinLr: {
      const double f = 0.5 * (1.0 + std::cos(M_PI * (static_cast<double>(o.numCycles) / 2.0) * 2.0 * progress));
      return scale(std::max(0.0, f * (1.0 - minRate_) + minRate_));
    }
    default: return scale(1.0);
  }
}

double LrSchedule::learningRate(double baseLr, int64_t step) const {
  const LrValue v = at(step);
  return baseLr * v.scale + v.offset;
}

const LrSchedule::Table& LrSchedule::tableOn(torch::Device device) const {
  if (table_ && table_->device == device) return *table_;
  const int64_t last = std::max(options_.lastStep, options_.totalSteps);
  std::vector<double> scale(static_cast<size_t>(last + 1)), offset(static_cast<size_t>(last + 1));
  for (int64_t k = 0; k <= last; ++k) {
    const LrValue v = at(k);
    scale[static_cast<size_t>(k)] = v.scale;
    offset[static_cast<size_t>(k)] = v.offset;
  }
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  Table t;
  t.device = device;
  t.scale = torch::tensor(scale, f64).to(device);
  t.offset = torch::tensor(offset, f64).to(device);
  table_ = std::move(t);
  return *table_;
}

void LrSchedule::prepare(torch::Device device) const { tableOn(device); }

torch::Tensor LrSchedule::factor(const torch::Tensor& step) const {
  const Table& t = tableOn(step.device());
  const torch::Tensor index = step.to(torch::kLong).clamp(0, t.scale.size(0) - 1).reshape({1});
  return t.scale.index_select(0, index).reshape({});
}

void LrSchedule::apply(Optimizer& optimizer) const {
  if (options_.type == LrSchedulerType::Adafactor && !options_.torchScheduler) return;  // the optimizer's relative step sets the rate
  torch::NoGradGuard noGrad;
  const Table& t = tableOn(optimizer.stepCount().device());
  const torch::Tensor index = optimizer.stepCount().to(torch::kLong).clamp(0, t.scale.size(0) - 1).reshape({1});
  const torch::Tensor scale = t.scale.index_select(0, index).reshape({});
  const torch::Tensor offset = t.offset.index_select(0, index).reshape({});
  for (size_t g = 0; g < optimizer.groupCount(); ++g) optimizer.lr(g).copy_(scale * optimizer.group(g).lr + offset);
}

}  // namespace sinter::train

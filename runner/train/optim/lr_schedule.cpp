#include "train/optim/lr_schedule.h"

#include <cmath>
#include <stdexcept>

#include "train/optim/optimizer.h"

namespace sinter::train {

namespace {
constexpr double kPi = 3.14159265358979323846;
}

const std::vector<std::string>& lrSchedulerNames() {
  static const std::vector<std::string> names = {"constant", "constant_with_warmup", "linear",
                                                 "cosine", "cosine_with_restarts", "polynomial",
                                                 "adafactor"};
  return names;
}

LrSchedulerType parseLrSchedulerType(const std::string& name) {
  const auto& names = lrSchedulerNames();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<LrSchedulerType>(i);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
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

int64_t resolveWarmupSteps(double lrWarmupSteps, int64_t totalSteps) {
  if (lrWarmupSteps < 0) throw std::invalid_argument("lr_warmup_steps must not be negative");
  if (lrWarmupSteps > 0 && lrWarmupSteps < 1) return static_cast<int64_t>(lrWarmupSteps * static_cast<double>(totalSteps));
  if (lrWarmupSteps != std::floor(lrWarmupSteps))
    throw std::invalid_argument("lr_warmup_steps must be a whole number of steps or a ratio below 1");
  return static_cast<int64_t>(lrWarmupSteps);
}

LrSchedule::LrSchedule(LrScheduleOptions options) : options_(options) {
  if (options_.type == LrSchedulerType::Constant && options_.warmupSteps != 0)
    throw std::invalid_argument("lr_scheduler constant does not take lr_warmup_steps (use constant_with_warmup)");
  if (options_.type == LrSchedulerType::Adafactor && options_.warmupSteps != 0)
    throw std::invalid_argument("lr_scheduler adafactor does not take lr_warmup_steps (Adafactor's relative step warms up "
                                "with warmup_init=True)");
  if (options_.totalSteps < 1) throw std::invalid_argument("the lr schedule needs at least one step");
  if (options_.type == LrSchedulerType::CosineWithRestarts && options_.numCycles < 1)
    throw std::invalid_argument("lr_scheduler_num_cycles must be at least 1");
  if (options_.type == LrSchedulerType::Polynomial && !(options_.initialLr > options_.lrEnd))
    throw std::invalid_argument("polynomial lr_scheduler: learning_rate must be above lr_end (1e-7)");
}

double LrSchedule::factor(int64_t stepInt) const {
  const double s = static_cast<double>(stepInt);
  const double w = static_cast<double>(options_.warmupSteps);
  const double t = static_cast<double>(options_.totalSteps);
  if (options_.type == LrSchedulerType::Constant || options_.type == LrSchedulerType::Adafactor) return 1.0;
  if (s < w) return s / std::max(1.0, w);
  const double progress = (s - w) / std::max(1.0, t - w);
  switch (options_.type) {
    case LrSchedulerType::ConstantWithWarmup: return 1.0;
    case LrSchedulerType::Linear: return std::max(0.0, (t - s) / std::max(1.0, t - w));
    case LrSchedulerType::Cosine: return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * 2.0 * 0.5 * progress)));
    case LrSchedulerType::CosineWithRestarts:
      if (progress >= 1.0) return 0.0;
      return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * std::fmod(static_cast<double>(options_.numCycles) * progress, 1.0))));
    case LrSchedulerType::Polynomial: {
      const double lrInit = options_.initialLr, lrEnd = options_.lrEnd;
      if (s > t) return lrEnd / lrInit;
      const double remaining = 1.0 - (s - w) / std::max(1.0, t - w);
      return ((lrInit - lrEnd) * std::pow(remaining, options_.power) + lrEnd) / lrInit;
    }
    default: return 1.0;
  }
}

torch::Tensor LrSchedule::factor(const torch::Tensor& stepTensor) const {
  const torch::Tensor s = stepTensor.to(torch::kFloat64);
  const double w = static_cast<double>(options_.warmupSteps);
  const double t = static_cast<double>(options_.totalSteps);
  const torch::Tensor one = torch::ones_like(s);
  if (options_.type == LrSchedulerType::Constant || options_.type == LrSchedulerType::Adafactor) return one;
  const torch::Tensor warm = s / std::max(1.0, w);
  const torch::Tensor progress = (s - w) / std::max(1.0, t - w);
  torch::Tensor after;
  switch (options_.type) {
    case LrSchedulerType::ConstantWithWarmup: after = one; break;
    case LrSchedulerType::Linear: after = torch::clamp_min((t - s) / std::max(1.0, t - w), 0.0); break;
    case LrSchedulerType::Cosine: after = torch::clamp_min(0.5 * (1.0 + torch::cos(kPi * 2.0 * 0.5 * progress)), 0.0); break;
    case LrSchedulerType::CosineWithRestarts: {
      const torch::Tensor cyc = torch::fmod(static_cast<double>(options_.numCycles) * progress, 1.0);
      after = torch::where(progress >= 1.0, torch::zeros_like(s), torch::clamp_min(0.5 * (1.0 + torch::cos(kPi * cyc)), 0.0));
      break;
    }
    case LrSchedulerType::Polynomial: {
      const double lrInit = options_.initialLr, lrEnd = options_.lrEnd;
      const torch::Tensor remaining = 1.0 - (s - w) / std::max(1.0, t - w);
      const torch::Tensor decay = ((lrInit - lrEnd) * torch::pow(torch::clamp_min(remaining, 0.0), options_.power) + lrEnd) / lrInit;
      after = torch::where(s > t, torch::full_like(s, lrEnd / lrInit), decay);
      break;
    }
    default: after = one;
  }
  return torch::where(s < w, warm, after);
}

void LrSchedule::apply(Optimizer& optimizer) const {
  if (options_.type == LrSchedulerType::Adafactor) return;  // the optimizer's relative step sets the rate
  torch::NoGradGuard noGrad;
  const torch::Tensor f = factor(optimizer.stepCount());
  for (size_t g = 0; g < optimizer.groupCount(); ++g)
    optimizer.lr(g).copy_(f * optimizer.group(g).lr);
}

}  // namespace sinter::train

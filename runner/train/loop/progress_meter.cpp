#include "train/loop/progress_meter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sinter::train {

ProgressMeter::ProgressMeter(long long totalSteps, long long windowSteps)
    : total_(std::max(1LL, totalSteps)), window_(static_cast<std::size_t>(std::max(1LL, windowSteps))) {}

void ProgressMeter::record(double loss, std::optional<double> stepSeconds) {
  losses_.push_back(loss);
  lossSum_ += loss;
  if (losses_.size() > window_) {
    lossSum_ -= losses_.front();
    losses_.pop_front();
  }
  if (stepSeconds) {
    trainingSeconds_ += *stepSeconds;
    ++stepsTimed_;
  }
}

double ProgressMeter::averageLoss() const { return losses_.empty() ? 0.0 : lossSum_ / static_cast<double>(losses_.size()); }

double ProgressMeter::itPerSecond() const { return trainingSeconds_ > 0 ? stepsTimed_ / trainingSeconds_ : 0.0; }

double ProgressMeter::etaSeconds(long long step) const {
  const double rate = itPerSecond();
  return rate > 0 ? static_cast<double>(total_ - step) / rate : 0.0;
}

namespace {
std::string clock(double seconds) {
  long long s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%02lld:%02lld", s / 60, s % 60);
  return buf;
}
}  // namespace

std::string ProgressMeter::line(long long step) const {
  const double frac = static_cast<double>(step) / static_cast<double>(total_);
  const int width = 20;
  const int filled = static_cast<int>(frac * width);
  std::string bar;
  for (int i = 0; i < width; ++i) bar += i < filled ? "#" : " ";
  char buf[256];
  std::snprintf(buf, sizeof buf, "steps: %3d%%|%s| %lld/%lld [%s<%s, %5.2fit/s, avr_loss=%.4g]",
                static_cast<int>(frac * 100), bar.c_str(), step, total_, clock(trainingSeconds_).c_str(),
                clock(etaSeconds(step)).c_str(), itPerSecond(), averageLoss());
  return buf;
}

}  // namespace sinter::train

#pragma once
// Step timing for the progress line and step events: it/s, ETA and the running average loss
// (sd-scripts' avr_loss: the mean over the last epoch's worth of steps).
#include <chrono>
#include <deque>
#include <optional>
#include <string>

namespace sinter::train {

class ProgressMeter {
 public:
  ProgressMeter(long long totalSteps, long long windowSteps);
  // Call once per optimizer step with the step's loss (read back outside the step) and its time;
  // warm-up steps count for the loss but not for the speed.
  void record(double loss, std::optional<double> stepSeconds);
  double averageLoss() const;
  double itPerSecond() const;  // over the training time so far (warm-up excluded)
  double etaSeconds(long long step) const;
  // "steps:  12%|██▏        | 12/100 [00:10<01:13,  1.20it/s, avr_loss=0.0812]"
  std::string line(long long step) const;

 private:
  long long total_;
  std::size_t window_;
  std::deque<double> losses_;
  double lossSum_ = 0;
  double trainingSeconds_ = 0;
  long long stepsTimed_ = 0;
};

}  // namespace sinter::train

#pragma once
// profile_steps: N training steps after warm-up recorded with libtorch's Kineto profiler (host
// ops and, on a GPU, kernels and graph launches) into a Chrome/Perfetto trace written next to the
// outputs. Profiling eager against compiled runs is how users see what compile did.
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>

namespace sinter::train {

// Whether this libtorch can write traces (built with Kineto); otherwise why not.
bool profilerAvailable(std::string* why = nullptr);

class StepProfiler {
 public:
  // steps == 0, or no profiler in this libtorch: off. The first profiled step is 2 (step 1 is where warm-up and capture happen),
  // or 1 in a one-step run.
  StepProfiler(long long steps, long long maxTrainSteps, std::string tracePath, torch::Device device);
  ~StepProfiler();

  // Around each optimizer step (1-based global step numbers).
  void stepStarts(long long step);
  // The trace's path once it is written (after the last profiled step).
  std::optional<std::string> stepEnded(long long step);
  // At the end of the run (a stop, or fewer steps than asked): writes what was recorded.
  std::optional<std::string> finish();
  const std::string& tracePath() const { return path_; }
  bool enabled() const { return first_ > 0; }

 private:
  std::optional<std::string> stop();
  long long first_ = 0, last_ = 0;
  std::string path_;
  torch::Device device_;
  bool active_ = false;
};

}  // namespace sinter::train

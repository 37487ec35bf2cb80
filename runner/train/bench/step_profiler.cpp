#include "train/bench/step_profiler.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <unistd.h>

namespace sinter::train {

namespace {

namespace kineto = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

const std::set<ActivityType>& cpuOnly() {
  static const std::set<ActivityType> a{ActivityType::CPU};
  return a;
}

}  // namespace

bool profilerAvailable(std::string* why) {
  // A libtorch without Kineto starts and stops a profiler but cannot save it: try it once.
  static const std::optional<std::string> failure = []() -> std::optional<std::string> {
    const std::string probe = (std::filesystem::temp_directory_path() / ("sinter-profiler-probe-" + std::to_string(::getpid()) + ".json")).string();
    try {
      const ProfilerConfig config(ProfilerState::KINETO);
      kineto::prepareProfiler(config, cpuOnly());
      kineto::enableProfiler(config, cpuOnly());
      kineto::disableProfiler()->save(probe);
      std::filesystem::remove(probe);
      return std::nullopt;
    } catch (const std::exception&) {
      std::error_code ec;
      std::filesystem::remove(probe, ec);
      return std::string("this libtorch was built without the Kineto profiler (USE_KINETO=0), so no trace can be written");
    }
  }();
  if (failure && why) *why = *failure;
  return !failure;
}

StepProfiler::StepProfiler(long long steps, long long maxTrainSteps, std::string tracePath, torch::Device device)
    : path_(std::move(tracePath)), device_(device) {
  if (steps <= 0 || !profilerAvailable()) return;
  first_ = maxTrainSteps > 1 ? 2 : 1;
  last_ = std::min(maxTrainSteps, first_ + steps - 1);
}

StepProfiler::~StepProfiler() {
  if (active_) kineto::disableProfiler();
}

void StepProfiler::stepStarts(long long step) {
  if (step != first_ || active_) return;
  std::set<ActivityType> activities{ActivityType::CPU};
  if (device_.is_cuda()) activities.insert(ActivityType::CUDA);
  const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true);
  synchronize(device_);
  try {
    kineto::prepareProfiler(config, activities);
    kineto::enableProfiler(config, activities);
  } catch (const std::exception& e) {
    first_ = last_ = 0;
    throw std::runtime_error(std::string("profile_steps: the Kineto profiler of this libtorch cannot record: ") + e.what());
  }
  active_ = true;
}

std::optional<std::string> StepProfiler::stepEnded(long long step) {
  if (!active_ || step < last_) return std::nullopt;
  return stop();
}

std::optional<std::string> StepProfiler::finish() { return active_ ? stop() : std::nullopt; }

std::optional<std::string> StepProfiler::stop() {
  synchronize(device_);
  std::unique_ptr<kineto::ProfilerResult> result = kineto::disableProfiler();
  active_ = false;
  // Written beside and renamed, so that a trace file is never half written.
  const std::string partial = path_ + ".partial";
  // A benchmark's output_dir may not exist yet (a run's loop has made it by now).
  const std::filesystem::path folder = std::filesystem::path(path_).parent_path();
  if (!folder.empty()) std::filesystem::create_directories(folder);
  result->save(partial);
  std::filesystem::rename(partial, path_);
  return path_;
}

}  // namespace sinter::train

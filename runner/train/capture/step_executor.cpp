#include "train/capture/step_executor.h"

#include <chrono>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "compile/cuda_graph.h"
#include "train/capture/state_snapshot.h"

namespace sinter::train {

namespace {

// While it lives, the update's eager steps run at learning rate 0 where `on` (a warm-up whose
// parameters are not in its snapshot); off again however the warm-up ends.
class WarmupAtZeroLearningRate {
 public:
  WarmupAtZeroLearningRate(OptimizerUpdate& update, bool on) : update_(update) { update_.setWarmupAtZeroLearningRate(on); }
  ~WarmupAtZeroLearningRate() { update_.setWarmupAtZeroLearningRate(false); }
  WarmupAtZeroLearningRate(const WarmupAtZeroLearningRate&) = delete;
  WarmupAtZeroLearningRate& operator=(const WarmupAtZeroLearningRate&) = delete;

 private:
  OptimizerUpdate& update_;
};

}  // namespace

StepExecutor::StepExecutor(torch::Device device, OptimizerUpdate& update, StepExecutorOptions options,
                           std::vector<at::Generator> generators)
    : device_(device), update_(update), options_(options), generators_(std::move(generators)) {}

StepExecutor::~StepExecutor() = default;

torch::Tensor StepExecutor::runEager(const StagedLoss& loss, bool last, int64_t microBatches) {
  update_.beginMicroStep(last);
  torch::Tensor value = loss();
  update_.backward(value, options_.lossDivisor / static_cast<double>(microBatches));
  if (options_.regions) options_.regions->captureBackwards();
  if (last) update_.apply();
  return value.detach();
}

std::optional<double> StepExecutor::capture(const Key& key, const StagedLoss& stagedLoss, std::string* failure) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  bool zeroLearningRate = false;
  StateSnapshot snapshot = snapshotForWarmup(key.last, &zeroLearningRate);
  if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
  const double snapshotSeconds = since(start);
  torch::Tensor out;
  auto work = [&] { out = runEager(stagedLoss, key.last, key.shape.microBatches); };
  std::optional<compile::CapturedGraph::Seconds> graphSeconds;
  try {
    // The eager warm-up runs at lr 0; the capture (no eager run) records the real rates.
    WarmupAtZeroLearningRate warmup(update_, zeroLearningRate);
    if (device_.is_cuda() && compile::cudaGraphsCompiledIn()) {
      const compile::CapturedGraph* pool = graphs_.empty() ? nullptr : graphs_.begin()->second.graph.get();
      auto graph = std::make_unique<compile::CapturedGraph>(device_, work, options_.warmups, generators_, pool);
      graphSeconds = graph->seconds();
      graphs_[key] = Captured{std::move(graph), out};
    } else {
      for (int i = 0; i < options_.warmups; ++i) work();  // the warm-up alone: nothing to capture here
    }
  } catch (const std::exception& e) {
    snapshot.restore();
    failedShapes_.insert(key.shape);
    const std::string cause = e.what();
    if (options_.fatalOnCaptureFailure)
      throw std::runtime_error("compile_fullgraph: the training step for " + key.shape.describe() + " cannot be captured: " + cause);
    if (failure) *failure = cause;
    return std::nullopt;
  }
  const auto restoreStart = Clock::now();
  snapshot.restore();
  capturedShapes_.insert(key.shape);
  if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
  if (graphSeconds) {
    // Where a capture's time goes: a full-weight optimizer state makes the snapshot large.
    // What it need not copy is rebuilt: zeroed again, or (parameters at lr 0) left as they are.
    constexpr double kGiB = 1073741824.0;
    const std::string unchanged =
        snapshot.bytesLeftUnchanged() == 0
            ? ""
            : fmt::format(", parameters {:.2f} GiB not copied ({}{})", snapshot.bytesLeftUnchanged() / kGiB,
                          zeroLearningRate ? "the warm-up steps at learning rate 0" : "no optimizer step",
                          snapshot.bytesSignMasks() == 0
                              ? ""
                              : fmt::format("; their negative zeros kept as {:.1f} MiB of masks", snapshot.bytesSignMasks() / 1048576.0));
    spdlog::info("captured the step for {}{}: state snapshot {:.1f} s ({:.2f} GiB on the device, {:.2f} GiB in host memory, "
                 "{:.2f} GiB zero, zeroed again{}), {} warm-up runs {:.1f} s, capture {:.1f} s, restore {:.1f} s",
                 key.shape.describe(), key.last ? "" : " (accumulating)", snapshotSeconds, snapshot.bytesOnDevice() / kGiB,
                 (snapshot.bytes() - snapshot.bytesOnDevice()) / kGiB, snapshot.bytesZeroed() / kGiB, unchanged, options_.warmups,
                 graphSeconds->warmups, graphSeconds->capture, since(restoreStart));
  }
  return since(start);
}

StateSnapshot StepExecutor::snapshotForWarmup(bool last, bool* zeroLearningRate) {
  OptimizerUpdate::WarmupUndo undo = update_.warmupUndo(atStepBoundary_, last);
  *zeroLearningRate = undo.zeroLearningRate;
  StateSnapshot snapshot(std::move(undo.copied), generators_, std::move(undo.reset), StateSnapshot::stepReserve(device_),
                         std::move(undo.unchanged));
  lastSnapshot_ = SnapshotBytes{snapshot.bytes(), snapshot.bytesOnDevice(), snapshot.bytesZeroed(), snapshot.bytesLeftUnchanged()};
  return snapshot;
}

bool StepExecutor::mayCapture(const StepShape& shape) const {
  return !failedShapes_.count(shape) &&
         (capturedShapes_.count(shape) || static_cast<int>(capturedShapes_.size()) < options_.cacheLimit);
}

std::optional<double> StepExecutor::prepare(const StepShape& shape, bool last, const StagedLoss& stagedLoss) {
  if (options_.regions) {
    if (!warmedShapes_.insert(shape).second) return std::nullopt;
    const auto start = std::chrono::steady_clock::now();
    bool zeroLearningRate = false;
    StateSnapshot snapshot = snapshotForWarmup(last, &zeroLearningRate);
    {
      WarmupAtZeroLearningRate warmup(update_, zeroLearningRate);
      runEager(stagedLoss, last, shape.microBatches);
    }
    snapshot.restore();
    if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const Key key{shape, last};
  if (graphs_.count(key) || !mayCapture(shape)) return std::nullopt;
  return capture(key, stagedLoss, nullptr);
}

MicroStepResult StepExecutor::run(const StepShape& shape, bool last, const StagedLoss& stagedLoss) {
  MicroStepResult result;
  const Key key{shape, last};
  auto it = graphs_.find(key);
  if (it == graphs_.end() && options_.captureSteps && options_.captureInTraining && mayCapture(shape)) {
    std::string failure;
    result.capturedSeconds = capture(key, stagedLoss, &failure);
    if (!failure.empty()) result.captureFailure = failure;
    it = graphs_.find(key);
  }
  atStepBoundary_ = last;  // after this micro-step
  if (it != graphs_.end()) {
    it->second.graph->replay();
    ++replayed_;
    result.loss = it->second.loss.clone();  // the next replay overwrites the graph's output
    return result;
  }
  ++eager_;
  result.loss = runEager(stagedLoss, last, shape.microBatches);
  return result;
}

bool StepExecutor::replays(const StepShape& shape, bool last) const {
  if (!device_.is_cuda() || !compile::cudaGraphsCompiledIn()) return false;  // capture() only warms up
  return graphs_.count(Key{shape, last}) || (options_.captureSteps && options_.captureInTraining && mayCapture(shape));
}

double replayedShare(const StepExecutor& executor, const GraphedRegions* regions) {
  const long long replayed = regions ? regions->replayed() : executor.replayedMicroSteps();
  const long long all = replayed + (regions ? regions->eager() : executor.eagerMicroSteps());
  return all ? static_cast<double>(replayed) / static_cast<double>(all) : 0.0;
}

}  // namespace sinter::train

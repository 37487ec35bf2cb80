#pragma once
// How the loop runs a micro-batch (compile plan applied, DESIGN.md §6): eagerly (the model's blocks
// may replay their own graphs inside, graphed_regions.h), or replayed from a CUDA graph of the
// whole step captured per input shape: the family's staged loss, the backward
// pass and, on a step's last micro-batch, loss unscaling, gradient clipping, the lr schedule, the
// optimizer step and zeroing the gradients. Capturing a shape first runs warm-up steps (real steps,
// then undone), so a captured run trains exactly like an eager one; where the optimizer allows, they
// run at learning rate 0, which leaves the parameters as they were (no copy of them).
#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "train/base/shape_plan.h"
#include "train/capture/graphed_regions.h"
#include "train/capture/state_snapshot.h"
#include "train/optim/optimizer_update.h"

namespace sinter::compile {
class CapturedGraph;
}

namespace sinter::train {

struct StepExecutorOptions {
  bool captureSteps = false;  // the plan's whole-step graphs
  // The plan's per-block graphs: warming a shape up runs a step (then undone); after each backward
  // pass the blocks' backward graphs are captured.
  GraphedRegions* regions = nullptr;
  bool fatalOnCaptureFailure = false;  // fullgraph=true
  int cacheLimit = 8;                  // captured shapes at most
  int warmups = 3;                     // eager runs before a capture
  // gradient_accumulation_steps; a shape joining micro-batches (StepShape::microBatches) takes
  // their share of it: the mean over the joined samples is already the mean of their means.
  double lossDivisor = 1.0;
  // Whole-step graphs of shapes first seen while training (false with several ranks: a capture's
  // warm-up steps all-reduce, so every rank captures in the warm-up phase, in step).
  bool captureInTraining = true;
};

// The loss of the inputs staged for one shape (a 0-dim float32 device tensor with its graph).
using StagedLoss = std::function<torch::Tensor()>;

struct MicroStepResult {
  torch::Tensor loss;                     // detached, on the device
  std::optional<double> capturedSeconds;  // this call captured its shape first (warm-up + capture)
  std::optional<std::string> captureFailure;  // the shape could not be captured and ran eagerly
};

class StepExecutor {
 public:
  // `generators`: those the step draws from (registered with every graph, and restored with the
  // optimizer's tensors after warm-up).
  StepExecutor(torch::Device device, OptimizerUpdate& update, StepExecutorOptions options, std::vector<at::Generator> generators);
  ~StepExecutor();

  // Whether the plan captures anything of the step (whole or per block).
  bool captures() const { return options_.captureSteps || options_.regions; }

  // Warm-up (and capture, on a CUDA device with graphs) of the inputs staged for `shape`, the
  // state restored afterwards. Seconds taken, or nullopt when the shape is captured already or the
  // cache limit is reached. Throws when capture fails and the plan says fullgraph. Per block: one
  // step, in which the blocks capture themselves.
  std::optional<double> prepare(const StepShape& shape, bool last, const StagedLoss& stagedLoss);

  // One micro-batch whose inputs are staged for `shape`: replayed when captured (captured first if
  // the cache limit allows), else eager.
  MicroStepResult run(const StepShape& shape, bool last, const StagedLoss& stagedLoss);
  // One micro-batch eagerly (also for steps that cannot be staged, such as text encoder training);
  // `microBatches`: how many micro-batches it joins.
  torch::Tensor runEager(const StagedLoss& loss, bool last, int64_t microBatches = 1);
  // Whether run() replays a graph for `shape`: on a CUDA device with graphs, captured already or to
  // be captured in training within the cache limit.
  bool replays(const StepShape& shape, bool last) const;

  long long replayedMicroSteps() const { return replayed_; }
  long long eagerMicroSteps() const { return eager_; }

  // What the latest warm-up's snapshot copied and what it did not (StateSnapshot's counts).
  struct SnapshotBytes {
    int64_t copied = 0, onDevice = 0, zeroed = 0, leftUnchanged = 0;
  };
  const SnapshotBytes& lastSnapshotBytes() const { return lastSnapshot_; }

 private:
  struct Key {
    StepShape shape;
    bool last = true;
    bool operator<(const Key& o) const { return shape < o.shape || (shape == o.shape && last < o.last); }
  };
  struct Captured {
    std::unique_ptr<compile::CapturedGraph> graph;
    torch::Tensor loss;  // the graph's output, overwritten by each replay
  };
  std::optional<double> capture(const Key& key, const StagedLoss& stagedLoss, std::string* failure);
  // Not failed before, and captured already or within the cache limit (which counts shapes).
  bool mayCapture(const StepShape& shape) const;
  // The state a warm-up of micro-steps ending a step (`last`) or not changes, saved to be restored
  // after it (gradients only mid-step); `zeroLearningRate`: whether its steps must run at lr 0
  // (WarmupAtZeroLearningRate), which keeps the parameters out of the snapshot.
  StateSnapshot snapshotForWarmup(bool last, bool* zeroLearningRate);

  torch::Device device_;
  OptimizerUpdate& update_;
  StepExecutorOptions options_;
  std::vector<at::Generator> generators_;
  std::map<Key, Captured> graphs_;
  std::set<StepShape> capturedShapes_, failedShapes_, warmedShapes_;
  long long replayed_ = 0, eager_ = 0;
  SnapshotBytes lastSnapshot_;
  // No micro-batch of the current step has run (run() leaves it set after a step's last micro-batch).
  bool atStepBoundary_ = true;
};

// The share of what could replay that did: block passes with per-block graphs (`regions`), else
// micro-batches.
double replayedShare(const StepExecutor& executor, const GraphedRegions* regions);

}  // namespace sinter::train

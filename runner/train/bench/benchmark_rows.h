#pragma once
// The benchmarks' shared part: one row of a compile-mode sweep (a mode's training steps timed as a
// run's executor runs them, synced and pipelined, with first-step time and peak memory) for any
// family's staged step, and the table the rows print as.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/option.h"
#include "distributed/process_group.h"
#include "train/base/shape_plan.h"
#include "train/capture/graphed_regions.h"
#include "train/optim/optimizer_update.h"

namespace sinter::train {

// One row of the sweep: compile settings as a user writes them.
struct BenchMode {
  std::string label;
  bool compile = false;
  std::string backend = "inductor", mode = "default";
  bool fullgraph = false;
};

struct BenchRow {
  std::string mode, shapes;
  std::string mechanism;
  double firstStepS = 0, medianMs = 0, pipelinedMs = 0, peakMiB = 0;
  double replayedShare = 0;
  std::string refused;  // the plan's fatal error: the row did not run
  std::string failed;   // what it threw while running (the other rows still run)
};

// What a row needs of the model under test: its staged loss, its per-block regions and its fused kernels.
struct BenchModel {
  Family family;
  std::function<torch::Tensor(const StepShape&)> stagedLoss;
  std::function<void(GraphedRegions*)> captureRegions;  // nullptr: the blocks run as by default again
  std::function<void(bool)> setFusedKernels;            // empty: the model has none
  at::Generator generator;
};

// A benchmark started on several ranks (--nproc_per_node N, or torchrun's environment): each rank
// times the same step on its GPU, the trained parameters start from rank 0's and their gradients are
// all-reduced in every step, as in a data-parallel run; rank 0 prints. One process otherwise.
class BenchRanks {
 public:
  // `config`'s ddp_comm_hook says how the gradients travel.
  explicit BenchRanks(const Config& config);
  torch::Device device() const { return device_; }
  bool several() const { return group_ != nullptr; }
  bool printing() const { return !group_ || group_->rank() == 0; }
  // The step's update averages its gradients across the ranks (OptimizerUpdate::averageGradientsAcross),
  // during backward or after it as the family's runs do (FamilyFacts::overlapGradientReduction).
  void attach(OptimizerUpdate& update, bool overlapWithBackward = true);
  // "2 ranks (data parallel, gradients all-reduced by nccl)", or "1 process".
  std::string describe() const;

 private:
  torch::Device device_{torch::kCPU};
  std::unique_ptr<distributed::ProcessGroup> group_;
  distributed::GradientCommunication communication_ = distributed::GradientCommunication::Native;
};

// Waits for the device's queued work (nothing on the CPU).
void synchronizeDevice(const torch::Device& device);

// Times `steps` steps of one compile mode over `shapes` (staged already), as a training run's
// executor runs them; each step of `microBatches` micro-batches (gradient accumulation).
BenchRow runBenchRow(const Config& config, const torch::Device& device, OptimizerUpdate& update, BenchModel& model,
                     const BenchMode& mode, const std::vector<StepShape>& shapes, const std::string& shapesLabel, long long steps,
                     int microBatches = 1);

// The rows as a Markdown table, each against the eager row of its shapes.
void printBenchRows(const std::vector<BenchRow>& rows);

}  // namespace sinter::train

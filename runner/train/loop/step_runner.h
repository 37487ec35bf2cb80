#pragma once
// What runs a training step, set up from the run's options and compile plan: the optimizer and its
// learning-rate schedule, the update (clipping, loss scale, averaging across ranks), the blocks'
// captured regions (per-block capture) and the executor that runs each micro-batch eagerly or as a
// replayed graph of the whole step; then the step itself, its micro-batches (gradient accumulation)
// up to the end of their epoch, one after another or joined into one pass (micro_batch_joining.h).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/batch_plan.h"
#include "distributed/rank_agreement.h"
#include "train/capture/graphed_regions.h"
#include "train/capture/step_executor.h"
#include "train/loop/micro_batch_joining.h"
#include "train/loop/training_loop.h"
#include "train/loop/warmup_clock.h"
#include "train/optim/lr_schedule.h"
#include "train/optim/optimizer.h"
#include "train/optim/optimizer_update.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// One optimizer step's micro-batches.
struct StepResult {
  torch::Tensor loss;  // their mean (on the device, not read back)
  long long epoch = 0;  // 0-based
  std::string signature;  // "2x1024x768": batch size and bucket (a joined pass: "2 joined x 1x1024x768")
  bool epochEnds = false;  // the last batch was its epoch's last
  double captureSeconds = 0;  // graphs captured within the step (warm-up, not step time)
};

class StepRunner {
 public:
  StepRunner(const RunContext& run, FamilyPart& family, MethodPart& method, const LoopOptions& options, const RunSchedule& planned);
  ~StepRunner();  // the family's blocks let go of the captured regions
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  Optimizer& optimizer() { return *optimizer_; }
  const LrSchedule& schedule() const { return schedule_; }
  bool captures() const { return executor_->captures(); }
  // Whether the run stops after `step` (with several ranks, as rank 0 decides for all). The loop asks
  // it before step 1; after each step, RunControls (run_controls.h) decides the stop with the commands.
  bool stopAfter(long long step);

  // Before step 1, once the method says whether text encoders train: staged inputs (static buffers)
  // where something is captured (with trained text encoders only where the family's staged loss
  // runs them), and the planned batch shapes captured ahead, most frequent first (each followed by
  // its joined pass, where micro-batches join). Logs how micro-batches accumulate.
  void warmUp(bool textEncodersTrain, const data::BatchPlan& plan, WarmupClock& clock);
  // One optimizer step over the micro-batches `nextBatch` gives.
  StepResult step(const std::function<data::Batch()>& nextBatch, long long batchesPerEpoch, WarmupClock& clock);
  // At the run's end: how many steps joined their micro-batches, the share of micro-batches (or
  // block passes) that replayed graphs, and the samples' replays.
  void logHowStepsRan() const;

 private:
  double takeRegionCaptures();
  // One micro-batch (or a batch joining several) staged and run (replayed where captured), or run
  // eagerly; its loss, and in `result` the captures it made. `staged`: its shape where the caller
  // staged it already.
  torch::Tensor runMicroBatch(const data::Batch& batch, bool last, StepResult& result, WarmupClock& clock,
                              const std::optional<StepShape>& staged = std::nullopt);
  long long regionReplays() const;

  const RunContext& run_;
  FamilyPart& family_;
  int gradAccum_;
  std::unique_ptr<Optimizer> optimizer_;
  LrSchedule schedule_;
  std::unique_ptr<OptimizerUpdate> update_;
  std::optional<distributed::StopAgreement> stopAgreement_;
  std::vector<at::Generator> generators_;  // the noise's and LoRA dropout's
  std::optional<GraphedRegions> regions_;
  std::unique_ptr<StepExecutor> executor_;
  bool textEncodersTrain_ = false;
  bool staged_ = false;
  std::unique_ptr<MicroBatchJoining> joining_;
  long long stepsRun_ = 0;
};

}  // namespace sinter::train

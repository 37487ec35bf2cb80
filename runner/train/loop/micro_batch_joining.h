#pragma once
// Batched gradient accumulation (docs/DESIGN.md §6, issue 56): where the
// gradient_accumulation_steps micro-batches of a step share one shape, they run as one pass of
// their joined batch (fewer, larger kernels) and train as they would one after another: each
// micro-batch draws its random values as its own pass does (objectives/micro_batch_draws.h), and
// the mean over the joined samples is the mean of their means. What decides it: the run's switches
// (microBatchJoiningRefusal), then step by step the micro-batches' shapes (data/joined_batch.h) and
// on a GPU the memory one micro-batch was measured to take (joined_pass_memory.h).
#include <torch/torch.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "data/batch_loader.h"
#include "train/loop/joined_pass_memory.h"

namespace sinter::train {

// What a run that accumulates micro-batches knows of itself before step 1.
struct JoiningFacts {
  int microBatches = 1;               // gradient_accumulation_steps
  bool fusedBackwardPass = false;     // steps parameters inside backward (refused with accumulation anyway)
  bool blocksSwap = false;            // blocks_to_swap: the swap's streaming follows one pass at a time
  bool loraDropout = false;           // network/rank/module dropout: draws per module inside the forward pass
  std::string familyRefusal;          // FamilyPart::microBatchJoinRefusal
};
// Why a run never joins its micro-batches ("" where it may): no accumulation, the switch
// SINTER_BATCHED_ACCUMULATION=0, or one of the facts.
std::string microBatchJoiningRefusal(const JoiningFacts& facts);

class MicroBatchJoining {
 public:
  // `refusal`: microBatchJoiningRefusal's; `memoryLimitBytes`: vram_budget_gb's bytes, or 0.
  MicroBatchJoining(int microBatches, torch::Device device, std::string refusal, double memoryLimitBytes);

  bool on() const { return refusal_.empty(); }
  int microBatches() const { return microBatches_; }
  // The run's line about it: "gradient accumulation: 2 micro-batches of 1 run as one pass of 2
  // where their buckets match", or why they run one after another.
  std::string headline(int batchSize) const;
  // The step's micro-batches joined into one batch, or nullopt where they run one after another:
  // fewer than gradient_accumulation_steps (the epoch ends), shapes that differ, or on a GPU a shape
  // not measured yet (the run's first step is never joined there: it measures, and vram_budget_gb's
  // check reads its peak) or whose pass would not fit. Each kind of reason is logged once.
  std::optional<data::Batch> join(const std::vector<data::Batch>& batches, bool firstStep);
  JoinedPassMemory& memory() { return memory_; }
  // Logs `message` the first time `kind` is given.
  void logOnce(const std::string& kind, const std::string& message);
  // Each step, whether it ran joined; the run's end logs the count.
  void stepRan(bool joined) { ++(joined ? joinedSteps_ : otherSteps_); }
  std::string summary() const;

 private:
  int microBatches_;
  std::string refusal_;
  JoinedPassMemory memory_;
  std::set<std::string> logged_;
  long long joinedSteps_ = 0, otherSteps_ = 0;
};

// "2x1024x768": batch size and bucket, as the log, the memory rule and the warm-up events name a batch shape.
std::string batchSignatureLabel(long long batchSize, const data::Resolution& bucket);

}  // namespace sinter::train

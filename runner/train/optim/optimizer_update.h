#pragma once
// What surrounds a step's micro-batches, for every family and method: the compute copies of the
// trained weights refreshed before each forward pass and their gradients collected after it, the
// loss scaled for the backward pass (fp16), then unscaling, gradient clipping, the learning-rate
// schedule, the optimizer and zeroing the gradients, all on the device with no host read (so a graph
// can capture it). Under fused_backward_pass the optimizer steps each parameter during the backward
// pass instead (fused_backward.h).
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/config.h"
#include "distributed/gradient_reducer.h"
#include "train/base/compute_copies.h"
#include "train/base/mixed_precision.h"
#include "train/optim/fused_backward.h"
#include "train/optim/lr_schedule.h"
#include "train/base/step_derived_weights.h"
#include "train/optim/optimizer.h"

namespace sinter::train {

// How several ranks' gradients travel: ddp_comm_hook ("no", "fp16", "bf16"; the registry checked it).
distributed::GradientCommunication ddpCommunication(const Config& config);

class OptimizerUpdate {
 public:
  // `copies`: compute-dtype copies of the optimizer's parameters that the forward pass uses, or null.
  OptimizerUpdate(Optimizer& optimizer, const LrSchedule& schedule, double maxGradNorm, bool lossScaling, torch::Device device,
                  ComputeCopies* copies = nullptr, bool fusedBackwardPass = false);

  // Before a micro-batch's forward pass: the compute copies take the parameters' values; whether
  // it is the step's last (whose gradients are all-reduced across ranks).
  void beginMicroStep(bool lastOfStep = true);
  // Backward of one micro-batch's loss (divided over the accumulation, scaled under fp16);
  // gradients add up in the optimizer's persistent buffers (the copies' gradients are added there).
  void backward(const torch::Tensor& loss, double lossDivisor);
  // Unscale, clip, schedule, step, zero (under a fused backward pass, done in backward()); with
  // several ranks, after the gradients' all-reduce.
  void apply();
  // Data parallel over `group`'s ranks: the parameters take rank 0's values now, and every step's
  // gradients are averaged across the ranks before they are used (in buckets during backward, or
  // under a fused backward pass each gradient just before its step), travelling as `communication`
  // says (ddp_comm_hook); the buckets start during backward unless `overlapWithBackward` is false
  // (the family's choice, FamilyFacts::overlapGradientReduction).
  void averageGradientsAcross(distributed::ProcessGroup& group,
                              distributed::GradientCommunication communication = distributed::GradientCommunication::Native,
                              bool overlapWithBackward = true);
  // "N gradient buckets all-reduced as backward completes them", or what the fused pass does.
  std::string describeAveraging() const;
  // How warm-up micro-steps are undone: the tensors to copy back, and what to do after (the rest
  // follows from them). `atStepBoundary`: no micro-batch of the step has run yet, so the gradients
  // are zero and need no copy (a full-weight run's are as large as its weights). `lastOfStep`:
  // whether the warm-up's micro-steps end a step (only those step the optimizer, unless fused).
  struct WarmupUndo {
    std::vector<torch::Tensor> copied;
    // The parameters, where the warm-up leaves them bit-unchanged: it steps no optimizer, or its
    // steps run at learning rate 0 (`zeroLearningRate`, Optimizer::zeroLearningRateKeepsParameters)
    // and nothing else writes them (no afterStep, e.g. scale_weight_norms). StateSnapshot copies
    // only those holding a value a step by +-0 changes.
    std::vector<torch::Tensor> unchanged;
    std::function<void()> reset;
    bool zeroLearningRate = false;  // the warm-up's steps must run at lr 0 (setWarmupAtZeroLearningRate)
  };
  WarmupUndo warmupUndo(bool atStepBoundary, bool lastOfStep = true) const;
  // While on, eager steps run at learning rate 0: the rates the schedule writes are zeroed after it,
  // except in a step being captured into a graph, which records the real rates' computation. On
  // for the warm-up steps of a WarmupUndo whose zeroLearningRate is set, off after them.
  void setWarmupAtZeroLearningRate(bool on) { warmupAtZeroLearningRate_ = on; }
  // Runs right after every optimizer step (device work only: it may be captured with the step),
  // e.g. scale_weight_norms' max-norm of the LoRA weights.
  void setAfterStep(std::function<void()> afterStep) { afterStep_ = std::move(afterStep); }
  // Weights derived once per step (not with a fused backward pass): their gradients are carried
  // to the trained tensors before each update, and they are derived again after it.
  void setDerivedWeights(StepDerivedWeights derived) { derived_ = std::move(derived); }
  // The fused backward pass, or null.
  FusedBackwardPass* fusedBackwardPass() { return fused_.get(); }

 private:
  // schedule_.apply, then the warm-up's lr 0 (setWarmupAtZeroLearningRate).
  void applySchedule();

  Optimizer& optimizer_;
  const LrSchedule& schedule_;
  double maxGradNorm_;
  std::optional<LossScaler> scaler_;
  ComputeCopies* copies_ = nullptr;
  std::vector<torch::Tensor> params_;  // the fixed list the step works on
  std::unique_ptr<FusedBackwardPass> fused_;
  std::unique_ptr<distributed::GradientReducer> reducer_;
  bool lastOfStep_ = true;  // the micro-step under way ends the step
  std::function<void()> afterStep_;
  StepDerivedWeights derived_;
  bool warmupAtZeroLearningRate_ = false;
};

}  // namespace sinter::train

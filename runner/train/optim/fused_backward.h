#pragma once
// fused_backward_pass (sd-scripts' sdxl_train.py / flux_train.py): each parameter is clipped by its
// own gradient's norm (max_grad_norm), stepped by the optimizer and its gradient freed as soon as
// backward has accumulated it, so that the whole model's gradients never exist at once. Hooks on
// the parameters' gradient accumulators (the autograd nodes that write .grad) do it; they hold the
// accumulators, which autograd would otherwise recreate without the hooks.
#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "distributed/process_group.h"
#include "models/layers/block_swap.h"
#include "train/optim/optimizer.h"
#include "train/optim/optimizer_args.h"

namespace sinter::train {

// The DreamBooth/fine-tune option that steps parameters within the backward pass, as the config
// sets it: "fused_backward_pass", "fused_optimizer_groups" (sdxl_train.py: N optimizers, each
// stepped once its group's gradients are complete), "blockwise_fused_optimizers" (flux_train.py:
// one optimizer per block), or "" (none; on the LoRA tab they are ignored, as core's validation
// warns). The last two run as the first does, one parameter at a time: the same arithmetic for an
// optimizer whose update is per parameter, with each gradient freed sooner.
std::string fusedBackwardOption(const Config& config);
bool fusedBackwardPassRequested(const Config& config);

// Whether a run may use it, as sd-scripts allows it: fused_backward_pass with Adafactor; the group
// options with an optimizer whose update is per parameter (not Prodigy or D-Adaptation, whose step
// size is estimated across the parameters); no gradient accumulation. Else std::invalid_argument
// saying why.
void checkFusedBackwardPass(const OptimizerSettings& optimizer, long long gradientAccumulationSteps,
                            const std::string& option = "fused_backward_pass");

class FusedBackwardPass {
 public:
  FusedBackwardPass(Optimizer& optimizer, double maxGradNorm);
  ~FusedBackwardPass();
  FusedBackwardPass(const FusedBackwardPass&) = delete;
  FusedBackwardPass& operator=(const FusedBackwardPass&) = delete;

  // blocks_to_swap in a full-weight run: the swap's streamed weights, whose masters are optimizer
  // parameters in host memory, are stepped the same way through their device copies when the swap
  // hands over their gradients (models::BlockSwap::trainWeights); a master that is no optimizer
  // parameter is std::invalid_argument.
  void stepStreamedWeights(const std::shared_ptr<models::BlockSwap>& swap);
  // Several ranks: each gradient is averaged across them (all-reduced, waited for) before it is
  // clipped and stepped, so every rank steps the same values.
  void reduceGradientsWith(distributed::ProcessGroup* group) { group_ = group; }

 private:
  void reduce(torch::Tensor& grad) const;

  Optimizer& optimizer_;
  double maxGradNorm_;
  distributed::ProcessGroup* group_ = nullptr;
  std::vector<std::pair<std::shared_ptr<torch::autograd::Node>, uintptr_t>> hooks_;
  std::vector<std::shared_ptr<models::BlockSwap>> swaps_;
};

}  // namespace sinter::train

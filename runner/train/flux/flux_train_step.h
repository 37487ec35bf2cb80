#pragma once
// FLUX's objective for one micro-batch (flow matching, flow_matching.h), written like SDXL's
// (objectives/unet_train_step.h) so that it can be captured as a graph: inputs copied into static buffers
// kept per batch shape (with the shape's position ids and guidance), sigmas and noise drawn on the
// device, the loss a device tensor until the loop reads it.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <optional>

#include "models/flux/flux_transformer.h"
#include "train/base/shape_plan.h"
#include "train/objectives/flow_matching.h"

namespace sinter::train {

struct FluxStepBatch {
  torch::Tensor latents;      // [B, 16, h, w], shifted and scaled by the AE's factors
  torch::Tensor t5;           // [B, T, 4096] T5-XXL hidden states
  torch::Tensor t5Mask;       // [B, T]: 1 a token, 0 padding (read with apply_t5_attn_mask)
  torch::Tensor pooled;       // [B, 768] CLIP-L pooled output
  torch::Tensor lossWeights;  // [B]
  torch::Tensor lossMask;     // [B, 1, h, w] at the latents' size (masked_loss.h); with lossMasks only
  // With staged text (FluxTrainStep::useStagedText) in place of pooled (and t5 where T5-XXL encodes
  // in the step): the encoders' token ids by buffer name, and T5's token count.
  StaticBuffers textInputs;
  int64_t t5Tokens = 0;
  int64_t microBatches = 1;  // the micro-batches it joins (data::Batch::microBatches), each drawing its own noise
};

// The conditioning computed inside the staged loss from staged token ids, so that CLIP-L's (and
// T5-XXL's) forward, and backward where they train, are part of the step a graph captures.
struct FluxConditioning {
  torch::Tensor t5;      // undefined where T5-XXL's outputs are cached (read from the "t5" buffer)
  torch::Tensor pooled;
};
struct FluxStagedText {
  // The token-id buffers for a shape ("clip_l_ids", and "t5_ids" where T5-XXL encodes in the step),
  // with neutral values for warm-up.
  std::function<StaticBuffers(const StepShape&)> makeInputs;
  // The conditioning of the ids in a shape's buffers (device work only); "t5_mask" is among them.
  std::function<FluxConditioning(const StaticBuffers&)> encode;
};

struct FluxStepOptions {
  FlowMatchingOptions flow;
  double guidanceScale = 3.5;                   // guidance_scale, fed to dev's guidance embedding
  bool applyT5AttnMask = false;                 // apply_t5_attn_mask: padding tokens masked in attention
  torch::Dtype computeDtype = torch::kFloat32;  // the frozen weights' dtype
  bool lossMasks = false;  // every batch has a loss mask (alpha_mask, masked_loss): a static buffer
};

class FluxTrainStep {
 public:
  FluxTrainStep(models::FluxTransformer transformer, FluxStepOptions options, torch::Device device, std::uint64_t seed);

  // The loss of one micro-batch: a 0-dim float32 device tensor with its autograd graph.
  torch::Tensor loss(const FluxStepBatch& batch);
  // For capture: a batch without gradients copied into its shape's static buffers, and the loss of
  // whatever those buffers hold (device work only).
  StepShape stage(const FluxStepBatch& batch);
  torch::Tensor stagedLoss(const StepShape& shape);
  // Neutral inputs (zero latents and conditioning, every T5 token present) for a shape.
  void stageNeutral(const StepShape& shape);

  // The validation pass's loss of a batch: without gradients, every sample at noise level `sigma`,
  // the noise drawn from `generator` (the step's own is left untouched); the batch's inputs are not
  // copied into the static buffers.
  torch::Tensor validationLoss(const FluxStepBatch& batch, double sigma, const at::Generator& generator);

  at::Generator& generator() { return generator_; }
  // Whether batches carry loss masks (the dataset's, known once it is built); before any shape is
  // staged, since the masks are one of each shape's buffers.
  void useLossMasks(bool on);
  // Batches stage their text encoders' token ids and the staged loss encodes them (null: batches
  // stage T5-XXL's hidden states and CLIP-L's pooled vector); before any shape is staged.
  void useStagedText(std::optional<FluxStagedText> text);

 private:
  void stageLossMask(StaticBuffers& in, const FluxStepBatch& batch) const;
  StepShape shapeOf(const FluxStepBatch& batch) const;
  StaticBuffers& buffers(const StepShape& shape);
  // `fixedSigma`: every sample at it (validation); otherwise drawn by the timestep sampling.
  // `microBatches`: the joined micro-batches the buffers hold, each drawing its noise and sigmas.
  torch::Tensor lossOf(StaticBuffers& in, const torch::Tensor& t5, const torch::Tensor& pooled, const at::Generator& generator,
                       std::optional<double> fixedSigma = std::nullopt, int64_t microBatches = 1);

  models::FluxTransformer transformer_;
  FluxStepOptions options_;
  torch::Device device_;
  at::Generator generator_;
  torch::Tensor sigmaTable_;  // the shifted schedule for timestep_sampling "sigma", on the device
  ShapePlan shapes_;
  std::optional<FluxStagedText> text_;
};

}  // namespace sinter::train

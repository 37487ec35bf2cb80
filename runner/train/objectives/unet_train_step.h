#pragma once
// The latent-diffusion UNet's objective for one micro-batch (SDXL and SD 1.x/2.x), written so that it can later be captured as a graph:
// inputs are copied into static buffers kept per batch shape, timesteps and noise are drawn on the
// device, and the loss stays a device tensor until the loop reads it after the step. The backward
// pass and the optimizer update are the loop's (optimizer_update.h).
#include <torch/torch.h>

#include <functional>
#include <optional>

#include "compile/compile_plan.h"
#include "core/config.h"
#include "models/unet/sdxl_unet.h"
#include "train/base/shape_plan.h"
#include "train/objectives/diffusion_loss.h"
#include "train/objectives/noise_schedule.h"

namespace sinter::train {

// The compile plan's names for the LDM U-Net's step (SD 1.x/2.x and SDXL): its regions and the
// fused kernels backend=inductor runs in it.
compile::CompileTargets unetCompileTargets();

struct UnetStepBatch {
  torch::Tensor latents;      // [B, 4, h, w], already scaled by the VAE factor
  torch::Tensor context;      // [B, T, context width]: 2048 (SDXL), 768 (SD 1.x), 1024 (SD 2.x)
  torch::Tensor admVector;    // [B, 2816] for SDXL; undefined for a UNet without label_emb (SD 1.x/2.x)
  torch::Tensor lossWeights;  // [B]
  torch::Tensor lossMask;     // [B, 1, h, w] at the latents' size (masked_loss.h); with lossMasks only
  // With staged conditioning (UnetTrainStep::useStagedConditioning) in place of context and
  // admVector: the text encoders' inputs by buffer name, and the context's length T.
  StaticBuffers conditioningInputs;
  int64_t contextTokens = 0;
  int64_t microBatches = 1;  // the micro-batches it joins (data::Batch::microBatches), each drawing its own noise
};

// The conditioning computed inside the staged loss from staged inputs, so that the text encoders'
// forward (and backward, when they train) is part of the step a graph captures.
struct UnetConditioning {
  torch::Tensor context, admVector;  // admVector undefined for a UNet without label_emb
};
struct StagedConditioning {
  // The inputs' buffers for a shape (token ids, sizes), with neutral values for warm-up.
  std::function<StaticBuffers(const StepShape&)> makeInputs;
  // The context and adm vector of the inputs in a shape's buffers (device work only).
  std::function<UnetConditioning(const StaticBuffers&)> encode;
};

struct UnetStepOptions {
  NoiseScheduleOptions schedule;
  NoiseSamplingOptions noise;
  DiffusionLossOptions loss;
  bool lossMasks = false;  // every batch has a loss mask (alpha_mask, masked_loss): a static buffer
  torch::Dtype computeDtype = torch::kFloat32;  // the frozen weights' dtype

  // The config's noise, timestep and loss options (noise_offset, min_snr_gamma, v_parameterization, ...).
  static UnetStepOptions fromConfig(const Config& config, torch::Dtype computeDtype);
};

class UnetTrainStep {
 public:
  UnetTrainStep(models::SdxlUnet unet, UnetStepOptions options, torch::Device device, std::uint64_t seed);

  // The loss of one micro-batch: a 0-dim float32 device tensor with its autograd graph. Inputs
  // that need no gradient go through static per-shape buffers.
  torch::Tensor loss(const UnetStepBatch& batch);

  // For capture, the same in two halves: copying a batch without gradients into its shape's static
  // buffers, and the loss of whatever those buffers hold (device work only).
  StepShape stage(const UnetStepBatch& batch);
  torch::Tensor stagedLoss(const StepShape& shape);
  // Neutral inputs (zero latents and conditioning, unit loss weights) for warming up a shape
  // before any batch of it is seen.
  void stageNeutral(const StepShape& shape);

  // The validation pass's loss of a batch: without gradients, every sample at `timestep`, the noise
  // drawn from `generator` (the step's own is left untouched); the static buffers are not used.
  torch::Tensor validationLoss(const UnetStepBatch& batch, int64_t timestep, const at::Generator& generator);

  at::Generator& generator() { return generator_; }
  const DdpmNoiseSchedule& noiseSchedule() const { return schedule_; }
  // Whether batches carry loss masks (the dataset's, known once it is built); before any shape is
  // staged, since the masks are one of each shape's buffers.
  void useLossMasks(bool on);
  // Batches stage their text encoders' inputs and the staged loss encodes them (null: batches stage
  // the context and adm vector); before any shape is staged.
  void useStagedConditioning(std::optional<StagedConditioning> conditioning);

 private:
  static StepShape shapeOf(const UnetStepBatch& batch);
  StaticBuffers& buffers(const StepShape& shape);
  torch::Tensor lossOf(const torch::Tensor& latents, const torch::Tensor& context, const torch::Tensor& admVector,
                       const torch::Tensor& lossWeights, const torch::Tensor& lossMask, const NoiseSamplingOptions& noise,
                       const at::Generator& generator, int64_t microBatches = 1);
  void stageLossMask(StaticBuffers& in, const UnetStepBatch& batch) const;

  models::SdxlUnet unet_;
  UnetStepOptions options_;
  torch::Device device_;
  DdpmNoiseSchedule schedule_;
  at::Generator generator_;
  ShapePlan shapes_;
  std::optional<StagedConditioning> conditioning_;
};

}  // namespace sinter::train

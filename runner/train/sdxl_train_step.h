#pragma once
// One SDXL training step, written so that it can later be captured as a graph: inputs are copied
// into static buffers kept per batch shape, timesteps and noise are drawn on the device, the loss
// stays a device tensor until the caller reads it after the step, and the optimizer reads its step
// count and learning rate from device tensors.
#include <torch/torch.h>

#include <map>
#include <optional>
#include <tuple>

#include "models/sdxl_unet.h"
#include "train/adamw.h"
#include "train/diffusion_loss.h"
#include "train/lr_schedule.h"
#include "train/mixed_precision.h"
#include "train/noise_schedule.h"

namespace sinter::train {

struct SdxlStepBatch {
  torch::Tensor latents;      // [B, 4, h, w], already scaled by the VAE factor
  torch::Tensor context;      // [B, T, 2048]
  torch::Tensor admVector;    // [B, 2816]
  torch::Tensor lossWeights;  // [B]
};

struct SdxlStepOptions {
  NoiseSamplingOptions noise;
  DiffusionLossOptions loss;
  double maxGradNorm = 1.0;
  torch::Dtype computeDtype = torch::kFloat32;  // the frozen weights' dtype
  bool lossScaling = false;                      // fp16 with fp32 LoRA parameters
};

class SdxlTrainStep {
 public:
  SdxlTrainStep(models::SdxlUnet unet, SdxlStepOptions options, torch::Device device, std::uint64_t seed);

  // Forward and backward of one micro-batch; gradients accumulate. Returns the (undivided) loss
  // as a 0-dim device tensor. Inputs that need no gradient go through static per-shape buffers.
  torch::Tensor forwardBackward(const SdxlStepBatch& batch, double lossDivisor);

  // Clips, schedules the learning rate, steps and zeroes the gradients: all on the device.
  void optimizerStep(AdamW& optimizer, const LrSchedule& schedule);

  at::Generator& generator() { return generator_; }
  const DdpmNoiseSchedule& noiseSchedule() const { return schedule_; }
  size_t staticShapes() const { return buffers_.size(); }

 private:
  struct StaticInputs {
    torch::Tensor latents, context, admVector, lossWeights;
  };
  StaticInputs& buffersFor(const SdxlStepBatch& batch);

  models::SdxlUnet unet_;
  SdxlStepOptions options_;
  torch::Device device_;
  DdpmNoiseSchedule schedule_;
  at::Generator generator_;
  std::optional<LossScaler> scaler_;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, StaticInputs> buffers_;
};

}  // namespace sinter::train

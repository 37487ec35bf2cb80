#pragma once
// The four SDXL models a LoRA run uses, loaded from one single-file checkpoint (and an optional
// separate VAE), placed on the training device in the run's precision.
#include <torch/torch.h>

#include <optional>
#include <string>

#include "models/clip_text_model.h"
#include "models/open_clip_text_model.h"
#include "models/sdxl_unet.h"
#include "models/sdxl_vae.h"

namespace sinter::train {

struct SdxlModelSet {
  models::SdxlUnet unet{nullptr};
  models::SdxlVae vae{nullptr};
  models::ClipTextModel clipL{nullptr};
  models::OpenClipTextModel bigG{nullptr};

  // Frozen weights in `dtype` (the VAE stays fp32 under fp16: SDXL's VAE overflows in fp16); the
  // models a run may train (the UNet and text encoders) in `trainableDtype` where it is given.
  // The VAE in `vaeDtype` where it is given (no_half_vae: PrecisionPlan::vaeDtype()), else float32
  // under fp16 and `dtype` otherwise.
  void toDevice(const torch::Device& device, torch::Dtype dtype, std::optional<torch::Dtype> trainableDtype = std::nullopt,
                std::optional<torch::Dtype> vaeDtype = std::nullopt);
  // Text encoders in training mode only when their LoRA modules train (dropout); the rest eval.
  void setTraining(bool textEncoders);
  // Scaled latents of [-1, 1] images, without gradients, sampled with `generator` (so a resumed
  // run draws the same samples as an uninterrupted one).
  torch::Tensor encodeLatents(const torch::Tensor& images, const at::Generator& generator);
};

// `vaePath` empty: the checkpoint's own VAE.
SdxlModelSet loadSdxlModelSet(const std::string& checkpointPath, const std::string& vaePath);

}  // namespace sinter::train

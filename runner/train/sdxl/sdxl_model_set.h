#pragma once
// The four SDXL models a LoRA run uses, loaded from one single-file checkpoint (and an optional
// separate VAE), cast to the run's precision where they were loaded (the host) and placed on the
// training device model by model.
#include <torch/torch.h>

#include <optional>
#include <string>

#include "core/config.h"
#include "models/text_encoders/clip_text_model.h"
#include "models/text_encoders/open_clip_text_model.h"
#include "models/unet/sdxl_unet.h"
#include "models/autoencoders/sdxl_vae.h"

namespace sinter::train {

// Where the frozen base weights live (sd-scripts' fp8_base and fp8_base_unet, train_network.py):
// the U-Net's Linear and Conv2d weights stored as float8 e4m3 and upcast per call (its norms and
// biases, 0.06% of it, stay in the weight dtype); with fp8_base alone the text encoders' Linear
// weights too (their embeddings stay, as sd-scripts keeps them).
struct SdxlWeightPlacement {
  bool fp8Unet = false;
  bool fp8TextEncoders = false;
  static SdxlWeightPlacement fromConfig(const Config& config);
};

struct SdxlModelSet {
  models::SdxlUnet unet{nullptr};
  models::SdxlVae vae{nullptr};
  models::ClipTextModel clipL{nullptr};
  models::OpenClipTextModel bigG{nullptr};

  // Frozen weights in `dtype` where they are (the VAE stays fp32 under fp16: SDXL's VAE overflows
  // in fp16); the models a run may train (the UNet and text encoders) in `trainableDtype` where it
  // is given. The VAE in `vaeDtype` where it is given (no_half_vae: PrecisionPlan::vaeDtype()),
  // else float32 under fp16 and `dtype` otherwise. `placement`: the float8 stores. Nothing moves
  // (a run's start places the models one stage at a time: train/sdxl/sdxl_family.h).
  void castInPlace(torch::Dtype dtype, std::optional<torch::Dtype> trainableDtype = std::nullopt,
                   std::optional<torch::Dtype> vaeDtype = std::nullopt, const SdxlWeightPlacement& placement = {});
  // castInPlace in host memory, then every model on `device` module by module, so the device never
  // holds a model in its loading precision.
  void toDevice(const torch::Device& device, torch::Dtype dtype, std::optional<torch::Dtype> trainableDtype = std::nullopt,
                std::optional<torch::Dtype> vaeDtype = std::nullopt, const SdxlWeightPlacement& placement = {});
  // Text encoders in training mode only when their LoRA modules train (dropout); the rest eval.
  void setTraining(bool textEncoders);
  // Scaled latents of [-1, 1] images, without gradients, sampled with `generator` (so a resumed
  // run draws the same samples as an uninterrupted one).
  torch::Tensor encodeLatents(const torch::Tensor& images, const at::Generator& generator);
};

// `vaePath` empty: the checkpoint's own VAE.
SdxlModelSet loadSdxlModelSet(const std::string& checkpointPath, const std::string& vaePath);

}  // namespace sinter::train

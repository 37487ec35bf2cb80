#pragma once
// The four FLUX.1 models a LoRA run uses, each from the file FLUX users keep: the transformer
// (flux1-dev/schnell.safetensors), the autoencoder (ae.safetensors), CLIP-L (clip_l.safetensors)
// and the T5-XXL encoder (t5xxl_*.safetensors), cast to the run's precision where they were loaded
// (the host) and placed on the training device model by model (a run's start stages them:
// train/flux/flux_family.h).
#include <torch/torch.h>

#include <optional>
#include <string>

#include "core/config.h"
#include "models/text_encoders/clip_text_model.h"
#include "models/autoencoders/flux_autoencoder.h"
#include "models/flux/flux_transformer.h"
#include "models/weights/scaled_float8_weight.h"
#include "models/text_encoders/t5_encoder.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::train {

struct FluxModelFiles {
  std::string transformer;  // pretrained_model_name_or_path
  std::string ae, clipL, t5xxl;
};

// Where the transformer's frozen weights live (sd-scripts' fp8_base and blocks_to_swap).
struct FluxWeightPlacement {
  bool fp8Base = false;       // Linear weights in float8 e4m3, upcast per call
  bool fp8Scaled = false;     // with fp8Base: e4m3 with scales (fp8_scaled; per tensor, per channel with fp8_fast)
  models::Float8ScaledOptions fp8Compute;  // fp8_fast, fp8_fast_backward (with fp8Scaled)
  int64_t blocksToSwap = 0;   // models::fluxBlockSwapSplit
  // fp8_base without fp8_base_unet: T5-XXL's Linear weights in float8 e4m3 too, upcast per call,
  // its embeddings and layer norms in the weight dtype (sd-scripts' fp8 T5-XXL, flux_train_network's
  // prepare_text_encoder_fp8). CLIP-L stays in the weight dtype, as sd-scripts moves it.
  bool t5Float8 = false;

  // fp8_base (or fp8_base_unet), fp8_scaled, fp8_fast, fp8_fast_backward and blocks_to_swap.
  static FluxWeightPlacement fromConfig(const Config& config);
};

// What the placement cannot do on `device` (fp8_fast without FP8 tensor cores, fp8_scaled with
// blocks_to_swap): std::runtime_error or std::invalid_argument naming the option, before anything loads.
void checkFluxPlacement(const FluxWeightPlacement& placement, const torch::Device& device);

struct FluxModelSet {
  models::FluxTransformer transformer{nullptr};
  models::FluxAutoencoder ae{nullptr};
  models::ClipTextModel clipL{nullptr};  // none for Chroma, which has no CLIP-L
  models::T5Encoder t5{nullptr};

  // Frozen weights in `dtype` where they are (the AE stays fp32 under fp16, as SDXL's VAE does;
  // T5-XXL's Linear weights in float8 with placement.t5Float8). The transformer in `trainableDtype`
  // where it is given (a full-weight run's float32 masters), the AE in `aeDtype` where it is given
  // (no_half_vae: PrecisionPlan::vaeDtype()). Nothing moves.
  void castInPlace(torch::Dtype dtype, const FluxWeightPlacement& placement = {},
                   std::optional<torch::Dtype> trainableDtype = std::nullopt, std::optional<torch::Dtype> aeDtype = std::nullopt);
  // castInPlace, then every model on `device` module by module, the transformer's placement
  // (fp8_base, blocks_to_swap) applied on the way.
  void toDevice(const torch::Device& device, torch::Dtype dtype, const FluxWeightPlacement& placement = {},
                std::optional<torch::Dtype> trainableDtype = std::nullopt, std::optional<torch::Dtype> aeDtype = std::nullopt);
  // CLIP-L in training mode only when its LoRA modules train (dropout), T5-XXL only when its own
  // do (train_t5xxl); the AE eval.
  void setTraining(bool clipL, bool t5xxl = false);
  // FLUX's shifted and scaled latents of [-1, 1] images, without gradients, sampled with `generator`.
  torch::Tensor encodeLatents(const torch::Tensor& images, const at::Generator& generator);
};

// fp8_fast's rule: whether the transformer's Linear at `path` multiplies in FP8 (every one but
// those taking one row per sample, which stay dequantised).
bool fluxLinearMultipliesInFloat8(const std::string& path);

// The transformer's frozen weights cast to `dtype` where they are (the host, after loading), then
// fp8_base and blocks_to_swap applied, then moved to `device` module by module.
void placeFluxTransformer(models::FluxTransformerImpl& transformer, const torch::Device& device, torch::Dtype dtype,
                          const FluxWeightPlacement& placement);

// Each model sized from its file and loaded on the CPU in float32 (CLIP-L not for a Chroma
// transformer, whose files.clipL is ignored). models::CheckpointError names the file and what is
// missing; io::SafetensorsError a file that is no safetensors.
FluxModelSet loadFluxModelSet(const FluxModelFiles& files);

// CLIP-L as clip_l.safetensors holds it (Hugging Face's CLIPTextModel layout, "text_model.*",
// optionally under SDXL's or ComfyUI's prefix).
models::ClipTextModel loadClipL(const std::string& path);
std::string clipLPrefix(const io::SafetensorsFile& file);

}  // namespace sinter::train

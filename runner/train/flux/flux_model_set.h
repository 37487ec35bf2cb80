#pragma once
// The four FLUX.1 models a LoRA run uses, each from the file FLUX users keep: the transformer
// (flux1-dev/schnell.safetensors), the autoencoder (ae.safetensors), CLIP-L (clip_l.safetensors)
// and the T5-XXL encoder (t5xxl_*.safetensors), placed on the training device in the run's precision.
#include <torch/torch.h>

#include <optional>
#include <string>

#include "core/config.h"
#include "models/clip_text_model.h"
#include "models/flux_autoencoder.h"
#include "models/flux_transformer.h"
#include "models/scaled_float8_weight.h"
#include "models/t5_encoder.h"

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

  // fp8_base (or fp8_base_unet), fp8_scaled, fp8_fast, fp8_fast_backward and blocks_to_swap.
  static FluxWeightPlacement fromConfig(const Config& config);
};

struct FluxModelSet {
  models::FluxTransformer transformer{nullptr};
  models::FluxAutoencoder ae{nullptr};
  models::ClipTextModel clipL{nullptr};
  models::T5Encoder t5{nullptr};

  // Frozen weights in `dtype` (the AE stays fp32 under fp16, as SDXL's VAE does), cast before they
  // move and moved module by module, with the transformer's placement applied on the way.
  // The transformer in `trainableDtype` where it is given (a full-weight run's float32 masters).
  // The AE in `aeDtype` where it is given (no_half_vae: PrecisionPlan::vaeDtype()).
  void toDevice(const torch::Device& device, torch::Dtype dtype, const FluxWeightPlacement& placement = {},
                std::optional<torch::Dtype> trainableDtype = std::nullopt, std::optional<torch::Dtype> aeDtype = std::nullopt);
  // CLIP-L in training mode only when its LoRA modules train (dropout); T5 and the AE eval.
  void setTraining(bool textEncoder);
  // FLUX's shifted and scaled latents of [-1, 1] images, without gradients, sampled with `generator`.
  torch::Tensor encodeLatents(const torch::Tensor& images, const at::Generator& generator);
};

// The transformer's frozen weights cast to `dtype` where they are (the host, after loading), then
// fp8_base and blocks_to_swap applied, then moved to `device` module by module.
void placeFluxTransformer(models::FluxTransformerImpl& transformer, const torch::Device& device, torch::Dtype dtype,
                          const FluxWeightPlacement& placement);

// Each model sized from its file and loaded on the CPU in float32. models::CheckpointError names
// the file and what is missing; io::SafetensorsError a file that is no safetensors.
FluxModelSet loadFluxModelSet(const FluxModelFiles& files);

// CLIP-L as clip_l.safetensors holds it (Hugging Face's CLIPTextModel layout, "text_model.*",
// optionally under SDXL's or ComfyUI's prefix).
models::ClipTextModel loadClipL(const std::string& path);
std::string clipLPrefix(const io::SafetensorsFile& file);

}  // namespace sinter::train

#pragma once
// The denoising loop of a latent-diffusion UNet (SDXL, SD 1.x/2.x) for sample images: one of the
// diffusion samplers, with classifier-free guidance over [negative, prompt] when the conditioning
// holds both (diffusers guides above a scale of 1).
#include <torch/torch.h>

#include "models/unet/sdxl_unet.h"
#include "sample/diffusion_samplers.h"

namespace sinter::sample {

// The conditioning of one image: a batch of 1 (no guidance) or 2 (negative first).
struct UnetSampleConditioning {
  torch::Tensor context;    // [B, tokens, context width]
  torch::Tensor admVector;  // [B, adm width] for SDXL (pooled output and size embeddings); undefined for SD 1.x/2.x
};

// `latents` is the starting noise already multiplied by the sampler's initNoiseSigma, float32;
// returns the final latents (float32). The UNet runs in `computeDtype`.
torch::Tensor unetDenoise(models::SdxlUnetImpl& unet, DiffusionSampler& sampler, torch::Tensor latents,
                          const UnetSampleConditioning& conditioning, double scale, torch::Dtype computeDtype,
                          const at::Generator& generator);

}  // namespace sinter::sample

#pragma once
// SDXL sample images (sd-scripts' SdxlStableDiffusionLongPromptWeightingPipeline without prompt
// weighting): the prompt and the negative prompt encoded by CLIP-L and bigG as training encodes
// captions, the size conditioning of the image itself (original = target = the image's size, crop
// at 0, 0), classifier-free guidance over [negative, prompt] when the scale is above 1, one of the
// diffusion samplers, and the VAE's decoder.
#include <torch/torch.h>

#include "models/sdxl_unet.h"
#include "sample/diffusion_samplers.h"

namespace sinter::train {

// The conditioning of one image: a batch of 1 (no guidance) or 2 (negative first).
struct SdxlSampleConditioning {
  torch::Tensor context;    // [B, tokens, 2048]
  torch::Tensor admVector;  // [B, 2816]: bigG's pooled output and the size embeddings
};

// The denoising loop: `latents` is the starting noise already multiplied by the sampler's
// initNoiseSigma, float32; returns the final latents (float32). The UNet runs in `computeDtype`.
torch::Tensor sdxlDenoise(models::SdxlUnetImpl& unet, sample::DiffusionSampler& sampler, torch::Tensor latents,
                          const SdxlSampleConditioning& conditioning, double scale, torch::Dtype computeDtype,
                          const at::Generator& generator);

}  // namespace sinter::train

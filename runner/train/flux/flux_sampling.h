#pragma once
// FLUX.1 sample images as sd-scripts' flux_train_utils.sample_image_inference makes them: packed
// latent noise, BFL's schedule (steps + 1 times from 1 to 0, shifted by the image's token count),
// the Euler step of the flow x += (t_prev - t) v, dev's guidance embedding (3.5 unless --g says),
// classifier-free guidance over [negative, prompt] only when --l is not 1, and the AE's decoder.
#include <torch/torch.h>

#include <vector>

#include "models/flux/flux_transformer.h"

namespace sinter::train {

// get_schedule(steps, (h/2)(w/2), shift=True) for unpacked latents of h x w.
std::vector<double> fluxSampleTimesteps(int steps, int64_t latentHeight, int64_t latentWidth);

// The conditioning of one image: a batch of 1 or, with guidance, 2 (negative first).
struct FluxSampleConditioning {
  torch::Tensor t5, t5Mask, pooled;  // t5Mask undefined: no attention mask
  torch::Tensor guidance;            // [B] for dev, undefined for schnell
};

// BFL's denoise over packed tokens [1, (h/2)(w/2), 64] (float32) for a latent grid of h x w;
// returns the final packed tokens (float32). The transformer runs in `computeDtype`.
torch::Tensor fluxDenoise(models::FluxTransformerImpl& transformer, torch::Tensor tokens, int64_t latentHeight, int64_t latentWidth,
                          const FluxSampleConditioning& conditioning, const std::vector<double>& timesteps, double cfgScale,
                          torch::Dtype computeDtype);

}  // namespace sinter::train

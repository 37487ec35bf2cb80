#pragma once
// The outputs of a FLUX transformer and autoencoder on given inputs, without gradients: what
// `sinter-runner --module_outputs --model_family flux` writes for comparing the runner's modules
// with sd-scripts' (tests/gpu/flux_modules_vs_sdscripts.py).
#include <torch/torch.h>

#include <map>
#include <string>

#include "core/config.h"
#include "models/autoencoders/flux_autoencoder.h"
#include "models/flux/flux_transformer.h"
#include "models/text_encoders/t5_encoder.h"
#include "train/parts/family_registration.h"

namespace sinter::train {

// Inputs by name; a model runs only when it is given (non-null) and all of its inputs are there:
//   transformer: "img" [B, L, 64], "img_ids" [B, L, 3], "txt" [B, T, context], "txt_ids" [B, T, 3],
//                "timesteps" [B] (sigma in [0, 1]), "y" [B, vec], and "guidance" [B] for dev
//   autoencoder: "images" [B, 3, H, W] in [-1, 1]
//   T5 encoder:  "t5_ids" [B, T] (int64), and "t5_mask" [B, T] when padding is masked
// Outputs (contiguous, on the models' device): "flux" [B, L, 64]; "ae_mean" (the encoder's mean),
// "ae_latents" ((mean - shift) * scale), "ae_decoded" (ae_latents decoded); "t5" [B, T, d_model].
// An input of another rank or size than its model takes is std::invalid_argument naming it.
std::map<std::string, torch::Tensor> fluxModuleOutputs(models::FluxTransformer* transformer, models::FluxAutoencoder* ae,
                                                       models::T5Encoder* t5,
                                                       const std::map<std::string, torch::Tensor>& inputs);

// --module_outputs --model_family flux: the transformer (pretrained_model_name_or_path), the
// autoencoder (ae) and T5-XXL (t5xxl), whichever are given, in fp32 on `device`.
ModuleOutputs fluxModuleOutputsTool(const Config& config, const std::map<std::string, torch::Tensor>& inputs, const torch::Device& device);

}  // namespace sinter::train

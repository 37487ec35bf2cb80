#pragma once
// The outputs of an SDXL checkpoint's four models on given inputs, without gradients: what the
// golden-output test records and what `sinter-runner --module_outputs` writes for comparing the
// runner's modules with another implementation (tests/gpu/sdxl_modules_vs_sdscripts.py).
#include <torch/torch.h>

#include <map>
#include <string>

#include "core/config.h"
#include "train/parts/family_registration.h"
#include "train/sdxl/sdxl_model_set.h"

namespace sinter::train {

// Inputs by name; a model runs only when all of its inputs are given:
//   U-Net: "x" [B, C, h, w], "timesteps" [B] (integer), "context" [B, T, ctx], "y" [B, adm]
//   VAE: "images" [B, 3, H, W] in [-1, 1]      text encoders: "input_ids" [B, 77] (integer)
// Outputs (contiguous, on the models' device):
//   "unet"; "vae_mean", "vae_logvar", "vae_decoded" (of the mean, scaled by 0.13025);
//   "clip_l_hidden_last_layer" (the last layer's output), "clip_l_last" (after final_layer_norm);
//   "big_g_penultimate", "big_g_pooled".
// An input of another shape than its model takes is std::invalid_argument naming it.
std::map<std::string, torch::Tensor> sdxlModuleOutputs(SdxlModelSet& models, const std::map<std::string, torch::Tensor>& inputs);

// --module_outputs: the checkpoint (pretrained_model_name_or_path, vae) loaded in fp32 on `device`
// and run on the inputs.
ModuleOutputs sdxlModuleOutputsTool(const Config& config, const std::map<std::string, torch::Tensor>& inputs, const torch::Device& device);

}  // namespace sinter::train

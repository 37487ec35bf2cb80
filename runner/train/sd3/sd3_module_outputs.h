#pragma once
// The outputs of an SD 3 checkpoint's MMDiT, VAE and CLIPs on given inputs, without gradients: what
// `sinter-runner --module_outputs --model_family sd3` writes for comparing the runner's modules with
// sd-scripts' (tests/gpu/sd3_modules_vs_sdscripts.py).
#include <torch/torch.h>

#include <map>
#include <string>

#include "core/config.h"
#include "train/parts/family_registration.h"

namespace sinter::train {

// Inputs by name; a model runs when all of its inputs are there:
//   MMDiT: "x" [B, 16, H, W], "timesteps" [B] (sigma * 1000), "y" [B, adm], "context" [B, T, context]
//   VAE:   "images" [B, 3, H, W] in [-1, 1]
//   CLIPs: "clip_l_ids", "clip_g_ids" [B, 77] (int64)
// Outputs: "mmdit" [B, 16, H, W]; "vae_mean", "vae_latents" ((mean - 0.0609) * 1.5305), "vae_decoded";
// "clip_l_penultimate", "clip_l_embeds", "clip_g_penultimate", "clip_g_embeds".
// --module_outputs --model_family sd3: the models of pretrained_model_name_or_path (its CLIPs, or
// clip_l / clip_g given apart), in fp32 on `device`.
ModuleOutputs sd3ModuleOutputsTool(const Config& config, const std::map<std::string, torch::Tensor>& inputs, const torch::Device& device);

}  // namespace sinter::train

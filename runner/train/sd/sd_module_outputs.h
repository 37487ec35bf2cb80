#pragma once
// The outputs of an SD 1.x/2.x checkpoint's UNet and text encoder on given inputs, without
// gradients: what `sinter-runner --module_outputs --model_family sd15|sd2` writes for comparing the
// runner's modules with sd-scripts' own (tests/gpu/sd_vs_sdscripts.py).
#include <torch/torch.h>

#include <map>
#include <string>

#include "core/config.h"
#include "models/checkpoints/sd_checkpoint.h"
#include "train/parts/family_registration.h"

namespace sinter::train {

// Inputs by name; a model runs only when all of its inputs are given:
//   U-Net: "x" [B, 4, h, w], "timesteps" [B] (integer), "context" [B, T, context width]
//   text encoder: "input_ids" [B, 77] (integer)
// Outputs (contiguous): "unet"; "text_clip_skip1", "text_clip_skip2" (the conditioning training
// uses with clip_skip unset or 1, and 2: models/text_encoders/sd_text_encoding.h).
std::map<std::string, torch::Tensor> sdModuleOutputs(models::SdCheckpoint& models, const std::map<std::string, torch::Tensor>& inputs);

// --module_outputs: the checkpoint (pretrained_model_name_or_path) loaded in fp32 on `device` and
// run on the inputs.
ModuleOutputs sdModuleOutputsTool(const Config& config, const std::map<std::string, torch::Tensor>& inputs, const torch::Device& device);

}  // namespace sinter::train

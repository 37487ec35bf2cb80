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
// run on the inputs. With an embedding (token_string, weights: methods/embedding_on_encoders.h) its
// rows are the text encoder's added token rows; a prompt is tokenized as a run tokenizes a caption
// (the embedding's tokens added, max_token_length's chunks), its ids are the input "input_ids"
// ([chunks, 77]) and are written beside the outputs.
ModuleOutputs sdModuleOutputsTool(const Config& config, const ModuleInputs& inputs, const torch::Device& device);

}  // namespace sinter::train

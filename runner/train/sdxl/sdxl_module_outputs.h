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
//   VAE: "images" [B, 3, H, W] in [-1, 1]
//   text encoders: "input_ids" [B, 77] (integer), and for bigG "input_ids2" where given (sd-scripts'
//   second tokenizer pads with 0, the first with <|endoftext|>), else "input_ids"
// Outputs (contiguous, on the models' device):
//   "unet"; "vae_mean", "vae_logvar", "vae_decoded" (of the mean, scaled by 0.13025);
//   "clip_l_hidden_last_layer" (the last layer's output), "clip_l_last" (after final_layer_norm);
//   "big_g_penultimate", "big_g_pooled".
// An input of another shape than its model takes is std::invalid_argument naming it.
std::map<std::string, torch::Tensor> sdxlModuleOutputs(SdxlModelSet& models, const std::map<std::string, torch::Tensor>& inputs);

// --module_outputs: the checkpoint (pretrained_model_name_or_path, vae) loaded in fp32 on `device`
// and run on the inputs. Besides sdxlModuleOutputs' (the golden outputs' set), where the text
// encoders ran: "clip_l_penultimate", CLIP-L's hidden_states[11], what SDXL conditions on. With an
// embedding (token_string, weights: methods/embedding_on_encoders.h) its clip_l and clip_g rows are
// the encoders' added token rows; a prompt is tokenized as a run tokenizes a caption (the
// embedding's tokens added, max_token_length's chunks) into "input_ids" (CLIP-L's) and "input_ids2"
// (bigG's), [chunks, 77] each, which are written beside the outputs.
ModuleOutputs sdxlModuleOutputsTool(const Config& config, const ModuleInputs& inputs, const torch::Device& device);

}  // namespace sinter::train

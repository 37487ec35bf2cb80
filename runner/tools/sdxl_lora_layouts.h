#pragma once
// SDXL LoRAs whose U-Net modules carry diffusers' names, as OneTrainer writes them by default (its
// "legacy" safetensors: lora_unet_down_blocks_1_attentions_0_proj_in; its text encoders are already
// kohya's lora_te1_ / lora_te2_), read under sd-scripts' names (the SAI layout of sdxl_original_unet:
// lora_unet_input_blocks_4_1_proj_in), which sdxl_merge_lora.py, ComfyUI and A1111 apply.
#include <torch/torch.h>

#include <map>
#include <string>

#include "tools/converted_lora.h"

namespace sinter::tools {

// Whether `tensors` is an SDXL LoRA with diffusers-named U-Net modules. SD 1.x/2.x LoRAs carry the
// same block names as sd-scripts' own (it loads their U-Net in diffusers' layout), so only SDXL's
// marks count: a second text encoder (lora_te2_), add_embedding, more than one transformer block in
// an attention, or a cross-attention key 2048 wide.
bool hasSdxlDiffusersUnetNames(const std::map<std::string, torch::Tensor>& tensors);

// The file's U-Net modules under sd-scripts' names (full-size SDXL's blocks, the only size OneTrainer
// trains), the text encoders' unchanged; `unconverted`: U-Net keys that name no SDXL module.
ConvertedLora sdxlLoraWithSdScriptsNames(const std::map<std::string, torch::Tensor>& tensors);

}  // namespace sinter::tools

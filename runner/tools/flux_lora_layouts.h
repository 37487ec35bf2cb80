#pragma once
// FLUX LoRAs in the layouts other trainers write, and kohya's (sd-scripts' networks.lora_flux,
// BFL's module names: lora_unet_double_blocks_0_img_attn_qkv), as sd-scripts' convert_flux_lora.py
// converts them:
//  - diffusers: diffusers' module names under "transformer." (ai-toolkit, diffusers/PEFT), lora_A /
//    lora_B, q/k/v (and the single blocks' MLP input) as separate modules, no alpha (scale 1) or an
//    optional "<module>.alpha";
//  - OneTrainer: diffusers' module names with '_' under "lora_transformer_", lora_down / lora_up / alpha.
// Kohya's fused modules (qkv, linear1) become the separate ones and back: the downs stacked and the
// ups block-diagonal (rank the sum), or, the other way, split as convert_flux_lora.py splits them.
// The text encoders' modules are renamed one to one (convert_flux_lora.py leaves them out): CLIP-L
// lora_te1_ / "text_encoder.", T5-XXL kohya's lora_te3_, OneTrainer's lora_te2_, "text_encoder_2.".
#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/converted_lora.h"

namespace sinter::tools {

enum class FluxLoraLayout { Kohya, Diffusers, OneTrainer };

// "sd-scripts" (also "kohya"), "ai-toolkit" / "diffusers", "onetrainer"; std::invalid_argument otherwise.
FluxLoraLayout parseFluxLoraLayout(const std::string& name);
const char* fluxLoraLayoutName(FluxLoraLayout layout);

// The layout a FLUX LoRA's keys are in; nullopt when they are no FLUX transformer LoRA of another
// trainer (kohya's own, or another family's), which the tools read as they are.
std::optional<FluxLoraLayout> detectOtherFluxLoraLayout(const std::map<std::string, torch::Tensor>& tensors);

// `tensors` in `from` to `to` (one of them kohya's).
ConvertedLora convertFluxLora(const std::map<std::string, torch::Tensor>& tensors, FluxLoraLayout from, FluxLoraLayout to);

}  // namespace sinter::tools

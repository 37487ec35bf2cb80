#pragma once
// --print_lora_layout: every LoRA module a run would create for a model family (its kohya name,
// component and in/out features), from the models' configs alone: no weights are allocated, so
// the full-size layout prints in milliseconds.
#include <string>

namespace sinter::runner {

// {"family": "flux", "model_size": "full", "count": N, "modules": [{"name": ..., "component":
// "unet" | "te1" | "te2" | "te3", "in": ..., "out": ...}, ...]} in the order sd-scripts creates them
// (text encoders first, as its LoRA networks list them). `family`: "sdxl" or "flux".
// `textEncoders`: whether the text encoders get adapters too (network_train_unet_only off).
// `trainBlocks`, `trainT5xxl`: FLUX's train_blocks and train_t5xxl network arguments (T5-XXL's
// modules with the text encoders'). Throws std::invalid_argument for another family.
std::string loraLayoutJson(const std::string& family, bool tiny, bool textEncoders, const std::string& trainBlocks = "all",
                           bool trainT5xxl = false);

}  // namespace sinter::runner

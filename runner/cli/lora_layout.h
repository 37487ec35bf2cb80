#pragma once
// --print_lora_layout: every LoRA module a run would create for a model family (its kohya name,
// component and in/out features), from the models' configs alone: no weights are allocated, so
// the full-size layout prints in milliseconds.
#include <string>

#include "train/parts/family_registration.h"

namespace sinter::runner {

// {"family": "flux", "model_size": "full", "count": N, "modules": [{"name": ..., "component":
// "unet" | "te1" | "te2" | "te3", "in": ..., "out": ...}, ...]} of the family's models (its
// registration's loraLayout: rule and Linear layers per model, text encoders first, as sd-scripts'
// LoRA networks list them).
std::string loraLayoutJson(const std::string& family, bool tiny, const train::LoraLayoutModels& models);

}  // namespace sinter::runner

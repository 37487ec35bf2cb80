#pragma once
// The FLUX transformer's Linear layers computed from its config alone (no weights allocated), in
// module order with their checkpoint paths: what LoRA targets and --print_lora_layout list.
#include <string>
#include <vector>

#include "models/flux/flux_config.h"
#include "models/unet/sdxl_unet_layout.h"

namespace sinter::models {

// img_in, time_in, vector_in, guidance_in (dev), txt_in, then per double block img_mod.lin,
// img_attn.qkv, img_attn.proj, img_mlp.0, img_mlp.2 and the same for txt, per single block
// linear1, linear2, modulation.lin, then final_layer.linear and final_layer.adaLN_modulation.1.
// Chroma: img_in, distilled_guidance_layer's in_proj, layers.N.in_layer/out_layer and out_proj,
// txt_in, the blocks without their modulation Linears, final_layer.linear.
std::vector<LinearInfo> fluxTransformerLinearLayers(const FluxConfig& config);

// A Linear (by module path) that takes one row per sample, not one per token: the timestep,
// pooled-text and guidance embedders, every block's modulation and the final adaLN modulation.
bool fluxLinearTakesOneRowPerSample(const std::string& path);

// A double block's text-stream Linear (double_blocks.N.txt_*).
bool fluxLinearIsInTextStream(const std::string& path);

}  // namespace sinter::models

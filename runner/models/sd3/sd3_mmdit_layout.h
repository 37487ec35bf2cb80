#pragma once
// The Linear layers of SD 3's MMDiT from its config alone, in module order (what the LoRA listing
// of a full-size model needs without allocating one): t_embedder, y_embedder, context_embedder, each
// joint block's context_block then x_block (attn.qkv, attn.proj, attn2.*, mlp.fc1, mlp.fc2,
// adaLN_modulation.1), final_layer.
#include <vector>

#include "models/sd3/sd3_mmdit_config.h"
#include "models/unet/sdxl_unet_layout.h"  // LinearInfo

namespace sinter::models {

std::vector<LinearInfo> sd3MmditLinearLayers(const Sd3MmditConfig& config);

}  // namespace sinter::models

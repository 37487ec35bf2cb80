#pragma once
// The LoRA tools' view of SD 3.x files (parts/family_registration.h's checkpointLoraLayout): where
// networks.lora_sd3's modules land in SAI's single files (the MMDiT under model.diffusion_model.,
// CLIP-L, CLIP-G and T5-XXL under text_encoders.*.transformer. where the file holds them) and in
// the text encoder files sd-scripts takes apart (--clip_l, --clip_g, --t5xxl).
#include <string>

#include "train/parts/family_registration.h"

namespace sinter::train {

// `role`: "model" (a checkpoint), "clip_l", "clip_g" or "t5xxl" (a text encoder's own file).
CheckpointLoraLayout sd3CheckpointLoraLayout(const io::SafetensorsFile& file, const std::string& role);

}  // namespace sinter::train

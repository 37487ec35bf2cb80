#pragma once
// A checkpoint file opened for the LoRA tools that work on one (merge_lora, extract_lora_from_models):
// its family (from its keys, or the one that reads a text encoder file of `role`), the family's
// layout of it, and the kohya name of each of its weights (network/checkpoint_lora_names.h).
#include <map>
#include <string>

#include "io/safetensors.h"
#include "network/checkpoint_lora_names.h"
#include "train/parts/family_registration.h"

namespace sinter::tools {

struct CheckpointForLora {
  io::SafetensorsFile file;
  const train::FamilyRegistration* family = nullptr;
  train::CheckpointLoraLayout layout;
  std::map<std::string, network::LoraWeightSlot> slots;
};

// `role` "model" reads the family from the file's keys; "clip_l" / "t5xxl" (a text encoder given
// apart) take `family`, or the registered family that reads such files. std::invalid_argument,
// naming `flag` and the file, where no family this build merges into reads it.
CheckpointForLora openCheckpointForLora(const std::string& flag, const std::string& path, const std::string& role,
                                        const train::FamilyRegistration* family = nullptr);

}  // namespace sinter::tools

#pragma once
// The base model's facts that every method's file metadata names (ss_base_model_version,
// ss_sd_model_name, modelspec.architecture / implementation / prediction_type), taken from the
// family's side: LoRA, full weights and textual inversion record them alike.
#include "network/lora_metadata.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

inline void recordBaseModelFacts(const FamilyFacts& family, network::LoraRunFacts& facts) {
  facts.baseModelVersion = family.baseModelVersion;
  facts.sdModelName = family.checkpointFile;
  facts.modelSpecArchitecture = family.modelSpecArchitecture;
  facts.modelSpecImplementation = family.modelSpecImplementation;
  facts.modelSpecPredictionType = family.modelSpecPredictionType;
}

}  // namespace sinter::train

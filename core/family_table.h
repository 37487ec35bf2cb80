#pragma once
// The model families, one row each: what core and the app know of a family (its name as people
// read it, its sd-scripts network module, the checks sd-scripts makes of it, how kohya_ss's files
// name it, its full-size memory model). The runner's side of a family is its registration
// (runner/train/families.cpp), which core and the app cannot see. Adding a family: its row here,
// its folder and registration line in the runner (docs/adding-a-model-family.md).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/option.h"

namespace sinter {

struct MemoryModel;

struct FamilyRow {
  Family family;
  const char* label;       // as kohya_ss and the app name it: "SDXL", "FLUX.1", "SD 1.x", "SD 2.x", "SD 3.x"
  const char* loraModule;  // sd-scripts' LoRA network module for it
  // cache_text_encoder_outputs caches one encoder while the others' LoRA trains in the step
  // (sd-scripts' partial cache: FLUX caches T5-XXL, CLIP-L trains).
  bool partialTextCache;
  // sd-scripts' verify_bucket_reso_steps: bucket_reso_steps must be a multiple of this (LoRA; the
  // full-weight scripts); 0: not checked.
  int bucketMultipleLora, bucketMultipleFull;
  // kohya_ss's files: the checkboxes that pick it, with their place in the order kohya_ss's tabs
  // choose a script (the first ticked wins); the settings ticking one implies (SD 2.x: v2); the
  // model menu's entries that set it; whether its DreamBooth/fine-tune tab passes learning_rate_te;
  // its own "no half VAE" checkbox.
  std::vector<std::pair<const char*, int>> kohyaCheckboxes;
  std::vector<std::pair<const char*, bool>> kohyaImplied;
  std::vector<const char*> kohyaListedModels;
  bool kohyaLearningRateTe;
  const char* kohyaNoHalfVaeKey;  // null: none
  // Its full-size memory model (core/vram_plan.h); null: the planner has none.
  MemoryModel (*memoryModel)();
};

// In the registry's order of families.
const std::vector<FamilyRow>& familyTable();
const FamilyRow& familyRow(Family family);
// The labels of the families in a registry mask ("SDXL and FLUX.1"), in the table's order.
std::string familyLabels(std::uint8_t families);
// kohya_ss's SD 1.x scripts run when a file has the family checkboxes and none is ticked.
Family kohyaUntickedFamily();

}  // namespace sinter

#pragma once
// vram_budget_gb for SDXL: the memory model (core/vram_plan.h) sized from the run's one checkpoint:
// its U-Net, text encoders (and their token rows' widths, textual inversion's) and VAE (the
// safetensors header).
#include "core/config.h"
#include "core/vram_plan.h"

namespace sinter::train {

// Counts of the checkpoint the config names replace SDXL base's in `m`; a file not set or not
// readable keeps them. io::SafetensorsError for a file that is not safetensors.
void sizeSdxlMemoryModel(const Config& config, MemoryModel& m);

}  // namespace sinter::train

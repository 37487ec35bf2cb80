#pragma once
// vram_budget_gb for FLUX: the memory model (core/vram_plan.h) sized from the run's files: the
// transformer's blocks by prefix, T5-XXL, CLIP-L and the AE (their safetensors headers).
#include "core/config.h"
#include "core/vram_plan.h"

namespace sinter::train {

// Counts of the files the config names replace FLUX.1-dev's in `m`; a file not set or not
// readable keeps them. io::SafetensorsError for a file that is not safetensors.
void sizeFluxMemoryModel(const Config& config, MemoryModel& m);

}  // namespace sinter::train

#pragma once
// An SDXL checkpoint with random weights in the original single-file layout, for the demo, tests
// and benchmarks (sinter-runner --init_checkpoint OUT --model_family sdxl --model_size full|tiny).
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "models/checkpoints/sdxl_checkpoint.h"

namespace sinter::models {

// Floating-point weights are stored in `dtype` (integer buffers keep theirs). The file is
// written atomically and streamed one model at a time: memory holds at most one model (in
// float32) and one converted tensor, never the whole file.
void writeRandomSdxlCheckpoint(const std::string& path, const SdxlCheckpointConfig& config, uint64_t seed,
                               torch::Dtype dtype);
// tiny: SdxlCheckpointConfig::tiny() in float32; full: SdxlCheckpointConfig::full() in float16
// (about 6.9 GB, like the released sd_xl_base_1.0.safetensors).
void writeRandomSdxlCheckpoint(const std::string& path, bool tiny, uint64_t seed);

}  // namespace sinter::models

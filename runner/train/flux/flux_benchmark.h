#pragma once
// --benchmark_steps --model_family flux: the FLUX.1-dev LoRA training step at full size with random
// weights (batch 1, 1024x1024 = 4096 image tokens, 512 T5 tokens, networks.lora_flux rank 32
// alpha 16 on the 304 default modules, bf16 on a GPU), as sd-scripts' step is timed beside it
// (tests/gpu/README.md): eager, per-block and whole-step capture, timed after warm-up.
#include "core/config.h"

namespace sinter::train {

// Prints the numbers on stdout; returns an exit code. `scalingRows`: eager and the whole step
// captured only (the multi-GPU scaling table), as runs on several ranks always do.
int runFluxBenchmark(const Config& config, long long steps, bool tiny, bool scalingRows = false);

}  // namespace sinter::train

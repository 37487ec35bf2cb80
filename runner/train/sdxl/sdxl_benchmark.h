#pragma once
// --benchmark_steps: the SDXL LoRA training step at full size with random weights (batch 1,
// 1024x1024, rank 32, bf16 on a GPU), timed after warm-up, plus the fp32/bf16 forward agreement.
#include "core/config.h"

namespace sinter::train {

// Prints the numbers on stdout; returns an exit code. `scalingRows`: only what the multi-GPU scaling
// table compares (batch 1: eager and the whole step captured), as runs on several ranks always do.
// `optimizerRows`: instead, bs1 eager and captured (whole step) with AdamW and then with each other
// optimizer this build has, at its default arguments (--benchmark_optimizers). `networkRows`:
// instead, bs1 eager and captured with standard LoRA and then with each LyCORIS algorithm on the
// same modules (preset attn-mlp; dim 32, LoKr factor 8), each with AdamW, and for the algorithms
// whose delta is full-size, captured steps of 4 micro-batches with the delta built per forward and
// per step (--benchmark_networks).
int runSdxlBenchmark(const Config& config, long long steps, bool tiny, bool scalingRows = false, bool optimizerRows = false,
                     bool networkRows = false);

}  // namespace sinter::train

#pragma once
// --benchmark_steps: the SDXL LoRA training step at full size with random weights (batch 1,
// 1024x1024, rank 32, bf16 on a GPU), timed after warm-up, plus the fp32/bf16 forward agreement.
#include "core/config.h"

namespace sinter::train {

// Which rows the benchmark prints.
enum class SdxlBenchRows {
  Modes,       // every compile mode at bs1 and bs4, three buckets (the fused modes run the U-Net channels_last)
  Scaling,     // what the multi-GPU scaling table compares (bs1: eager and the whole step captured);
               // runs on several ranks always print these in place of Modes
  Optimizers,  // bs1 eager and captured with AdamW, then each other optimizer at its defaults (--benchmark_optimizers)
  Networks,    // bs1 eager and captured with standard LoRA, then each LyCORIS algorithm on the same
               // modules (preset attn-mlp; dim 32, LoKr factor 8), and for the algorithms whose delta
               // is full-size, 4 micro-batches with the delta built per forward and per step (--benchmark_networks)
};

// Prints the numbers on stdout; returns an exit code.
int runSdxlBenchmark(const Config& config, long long steps, bool tiny, SdxlBenchRows rows);

}  // namespace sinter::train

#pragma once
// FLUX.1 files with random weights in BFL's layout, for tests, the demo and benchmarks (the
// future --init_checkpoint OUT --model_family flux): the transformer (flux1-dev/schnell layout)
// and the autoencoder (ae.safetensors layout).
//
// The transformer's random weights are defined part by part, so that a full-size file (12B
// parameters) is written holding one part in memory, never the model: part 0 is everything
// outside the blocks (img_in, txt_in, time_in, vector_in, guidance_in, final_layer), part 1 + i
// is double_blocks.i, part 1 + depth + j is single_blocks.j; part p is built right after
// torch::manual_seed(seed + p). The same seed gives the same weights, in a file or in memory.
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "models/autoencoders/flux_autoencoder.h"
#include "models/flux/flux_config.h"
#include "models/flux/flux_transformer.h"

namespace sinter::models {

// The transformer with the weights the writer below stores for this seed (float32, CPU).
FluxTransformer buildRandomFluxTransformer(const FluxConfig& config, uint64_t seed);
// The autoencoder built right after torch::manual_seed(seed) (float32, CPU).
FluxAutoencoder buildRandomFluxAutoencoder(const FluxAutoencoderConfig& config, uint64_t seed);

// Floating-point weights stored in `dtype`; written atomically and streamed (one part alive at a time).
void writeRandomFluxTransformer(const std::string& path, const FluxConfig& config, uint64_t seed, torch::Dtype dtype);
void writeRandomFluxAutoencoder(const std::string& path, const FluxAutoencoderConfig& config, uint64_t seed,
                                torch::Dtype dtype);
// tiny: FluxConfig::tiny(dev) in float32; full: dev() or schnell() in bfloat16 (about 23.8 GB,
// as the released files).
void writeRandomFluxTransformer(const std::string& path, bool tiny, bool dev, uint64_t seed);
// tiny: FluxAutoencoderConfig::tiny(); full: full() (about 335 MB); both float32 as ae.safetensors.
void writeRandomFluxAutoencoder(const std::string& path, bool tiny, uint64_t seed);

}  // namespace sinter::models

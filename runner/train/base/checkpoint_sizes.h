#pragma once
// Parameter counts read from checkpoint files' safetensors headers (nothing loaded): what the memory
// plan sizes a run's models by (loop/vram_budget_plan.h, each family's sizeMemoryModel).
#include <cstdint>
#include <string>

#include "io/safetensors.h"

namespace sinter::train {

// A regular file at `path` (an empty path is none).
bool readable(const std::string& path);
// The elements of the tensors whose names start with `prefix`.
int64_t numelUnder(const io::SafetensorsFile& file, const std::string& prefix);
// The elements of every tensor of the file at `path`.
int64_t fileParams(const std::string& path);
// The VAE (or AE) encoder's working memory is its first level's, as wide as its conv_in's output:
// against the full size's (a smaller test model), 1 where the file does not say.
double autoencoderEncodeScale(const io::SafetensorsFile& file, const std::string& prefix);

}  // namespace sinter::train

#pragma once
// Writes a model's random weights without holding the model: the model is cut into parts (part 0
// what lies outside the repeated blocks, part 1 + i block i), each rebuilt from its seed when the
// file needs it, so a multi-billion-parameter file is written with one block in memory.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sinter::models {

using NamedWeights = std::vector<std::pair<std::string, torch::Tensor>>;

// The type a weight is stored as in a file of `dtype`: floating-point weights in `dtype`, others as they are.
torch::Dtype storedType(const torch::Tensor& t, torch::Dtype dtype);

// `buildPart(p)` must give the same tensors each time it is called for p (it seeds itself).
// Floating-point weights are stored in `dtype`; the file is written atomically.
void writeRandomParts(const std::string& path, int64_t parts, const std::function<NamedWeights(int64_t part)>& buildPart,
                      torch::Dtype dtype, const std::map<std::string, std::string>& metadata);

}  // namespace sinter::models

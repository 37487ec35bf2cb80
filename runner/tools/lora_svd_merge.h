#pragma once
// svd_merge_lora: several LoRAs summed as weight deltas (Σ ratio · alpha/rank · up·down per module)
// and factored back to one rank by SVD, as sd-scripts' networks/svd_merge_lora.py does it: the
// largest `newRank` singular directions (capped by the weight's sides), up = U·diag(S), down = Vᴴ,
// both clamped to ± the 0.99 quantile of their values, alpha = the module's new rank. The SVD is
// sd-scripts' too (of each summed weight, in the merge dtype): the clamp depends on its signs.
#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/lora_merge.h"

namespace sinter::tools {

struct SvdMergeOptions {
  int64_t newRank = 4;      // --new_rank
  int64_t newConvRank = 4;  // --new_conv_rank: 3x3 (and other non-1x1) convolutions
  torch::Dtype mergeDtype = torch::kFloat32;
  std::optional<double> clampQuantile = 0.99;  // svd_merge_lora.py's CLAMP_QUANTILE (no flag there; nullopt: none)
  torch::Device device = torch::kCPU;
};

// The merged LoRA's tensors (in the merge dtype, alpha as an integer tensor as sd-scripts writes
// it), in module order. Only lora_down/lora_up modules merge: a LyCORIS module of another kind is a
// std::invalid_argument naming it (lora_file_modules.h); so is a module whose factors differ in shape
// between files.
std::vector<std::pair<std::string, torch::Tensor>> svdMergeLoras(const std::vector<LoraToMerge>& loras, const SvdMergeOptions& options);

}  // namespace sinter::tools

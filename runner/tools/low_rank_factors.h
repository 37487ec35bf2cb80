#pragma once
// A weight delta factored into a LoRA module by truncated SVD, as sd-scripts' svd_merge_lora.py,
// extract_lora_from_models.py and flux_extract_lora.py do it: up = U·diag(S) and down = Vᴴ over the
// largest `rank` singular directions, both clamped to ± the `clampQuantile` quantile of their values,
// shaped as a Linear's ([out, rank], [rank, in]) or a convolution's ([out, rank, 1, 1], [rank, in, kh, kw]).
#include <torch/torch.h>

#include <optional>

namespace sinter::tools {

struct LowRankFactors {
  torch::Tensor up, down;  // on the delta's device, in float32 (float64 for a float64 delta)
};

// `rank` is capped by the weight's sides (sd-scripts' min(rank, in, out), channels for a
// convolution); read it from down.size(0). The clamp is sd-scripts': [-q, q] for q the quantile of
// the values, so a negative value beyond -q is clipped even at quantile 1; nullopt: no clamp.
LowRankFactors lowRankFactors(const torch::Tensor& delta, int64_t rank, std::optional<double> clampQuantile);

}  // namespace sinter::tools

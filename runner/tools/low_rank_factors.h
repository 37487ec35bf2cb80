#pragma once
// A weight delta factored into a LoRA module by truncated SVD, as sd-scripts' resize_lora.py,
// svd_merge_lora.py, extract_lora_from_models.py and flux_extract_lora.py do it: up = U·diag(S) and
// down = Vᴴ over the largest `rank` singular directions, (svd_merge and extract) clamped to ± the
// quantile of their values, shaped as a Linear's ([out, rank], [rank, in]) or a convolution's
// ([out, rank, 1, 1], [rank, in, kh, kw]).
#include <torch/torch.h>

#include <optional>
#include <vector>

namespace sinter::tools {

// The thin SVD of a product up·down ([out, R]·[R, K]) from its factors: QR of each, then the SVD
// of the small R×R core. Exact at any size (the product is never formed), in float64.
struct ProductSvd {
  torch::Tensor u, s, vh;  // [out, R], [R], [R, K], descending
};
ProductSvd productSvd(const torch::Tensor& up, const torch::Tensor& down);

struct LowRankFactors {
  torch::Tensor up, down;  // on the input's device, float32 (float64 from a float64 input)
};

// The rank is min(rank, in, out) of `weightShape` (channels for a convolution, as sd-scripts caps
// it); where the SVD has fewer directions, the rest are zeros, as sd-scripts' full SVD gives them.
// The clamp is sd-scripts': [-q, q] for q the quantile of all the values, so a negative value
// beyond -q is clipped even at quantile 1; nullopt: no clamp.
LowRankFactors truncatedFactors(const ProductSvd& svd, const std::vector<int64_t>& weightShape, int64_t rank,
                                std::optional<double> clampQuantile);

// The same from a delta shaped as its weight (its full SVD, in float32 as sd-scripts computes it).
LowRankFactors lowRankFactors(const torch::Tensor& delta, int64_t rank, std::optional<double> clampQuantile);

}  // namespace sinter::tools

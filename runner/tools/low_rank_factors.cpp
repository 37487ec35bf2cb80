#include "tools/low_rank_factors.h"

#include <algorithm>

namespace sinter::tools {

LowRankFactors lowRankFactors(const torch::Tensor& delta, int64_t rank, std::optional<double> clampQuantile) {
  torch::NoGradGuard noGrad;
  const bool conv = delta.dim() == 4;
  const int64_t outDim = delta.size(0), inDim = delta.size(1);
  rank = std::min({rank, inDim, outDim});
  // torch's SVD takes float32 or float64 (sd-scripts computes in float).
  const torch::Tensor matrix = delta.reshape({outDim, -1}).to(delta.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat32);
  const auto [u, s, vh] = torch::linalg_svd(matrix, /*full_matrices=*/false);
  torch::Tensor up = u.slice(1, 0, rank) * s.slice(0, 0, rank);
  torch::Tensor down = vh.slice(0, 0, rank);
  if (clampQuantile) {
    const torch::Tensor high = torch::quantile(torch::cat({up.flatten(), down.flatten()}), *clampQuantile);
    up = torch::max(torch::min(up, high), -high);
    down = torch::max(torch::min(down, high), -high);
  }
  if (conv) {
    up = up.reshape({outDim, rank, 1, 1});
    down = down.reshape({rank, inDim, delta.size(2), delta.size(3)});
  }
  return {up.contiguous(), down.contiguous()};
}

}  // namespace sinter::tools

#include "tools/low_rank_factors.h"

#include <algorithm>

namespace sinter::tools {

ProductSvd productSvd(const torch::Tensor& up, const torch::Tensor& down) {
  torch::NoGradGuard noGrad;
  // up·down = Qu·(Ru·Rdᵀ)·Qdᵀ; the core's SVD gives the product's.
  const auto [qu, ru] = torch::linalg_qr(up.to(torch::kDouble));
  const auto [qd, rd] = torch::linalg_qr(down.to(torch::kDouble).t());
  const auto [um, s, vmh] = torch::linalg_svd(torch::matmul(ru, rd.t()), /*full_matrices=*/false);
  return {torch::matmul(qu, um), s, torch::matmul(vmh, qd.t())};
}

LowRankFactors truncatedFactors(const ProductSvd& svd, const std::vector<int64_t>& weightShape, int64_t rank,
                                std::optional<double> clampQuantile) {
  torch::NoGradGuard noGrad;
  const int64_t outDim = weightShape[0], inDim = weightShape[1];
  rank = std::min({rank, inDim, outDim});
  const int64_t kept = std::min(rank, svd.s.size(0));
  torch::Tensor up = svd.u.slice(1, 0, kept) * svd.s.slice(0, 0, kept);
  torch::Tensor down = svd.vh.slice(0, 0, kept);
  if (kept < rank) {  // directions the SVD does not have: zeros
    up = torch::cat({up, torch::zeros({up.size(0), rank - kept}, up.options())}, 1);
    down = torch::cat({down, torch::zeros({rank - kept, down.size(1)}, down.options())}, 0);
  }
  if (up.scalar_type() != torch::kDouble) {
    up = up.to(torch::kFloat32);
    down = down.to(torch::kFloat32);
  }
  if (clampQuantile) {
    const torch::Tensor high = torch::quantile(torch::cat({up.flatten(), down.flatten()}), *clampQuantile);
    up = torch::max(torch::min(up, high), -high);
    down = torch::max(torch::min(down, high), -high);
  }
  if (weightShape.size() == 4) {
    up = up.reshape({outDim, rank, 1, 1});
    down = down.reshape({rank, inDim, weightShape[2], weightShape[3]});
  }
  return {up.contiguous(), down.contiguous()};
}

LowRankFactors lowRankFactors(const torch::Tensor& delta, int64_t rank, std::optional<double> clampQuantile) {
  torch::NoGradGuard noGrad;
  // torch's SVD takes float32 or float64 (sd-scripts computes in float).
  const torch::Tensor matrix =
      delta.reshape({delta.size(0), -1}).to(delta.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat32);
  const auto [u, s, vh] = torch::linalg_svd(matrix, /*full_matrices=*/false);
  return truncatedFactors({u, s, vh}, delta.sizes().vec(), rank, clampQuantile);
}

}  // namespace sinter::tools

#include "models/flux/flux_rope.h"

#include <stdexcept>

namespace sinter::models {

torch::Tensor fluxRopeRotations(const torch::Tensor& ids, const std::vector<int64_t>& axesDim, double theta) {
  if (ids.dim() != 3 || ids.size(2) != static_cast<int64_t>(axesDim.size()))
    throw std::invalid_argument("FLUX RoPE: position ids must be [batch, tokens, " + std::to_string(axesDim.size()) +
                                "], got " + c10::str(ids.sizes()));
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(ids.device());
  std::vector<torch::Tensor> perAxis;
  for (size_t a = 0; a < axesDim.size(); ++a) {
    const int64_t dim = axesDim[a];
    // omega_i = theta^(-2i/dim), i = 0 .. dim/2-1
    const torch::Tensor omega = 1.0 / torch::pow(theta, torch::arange(0, dim, 2, f64) / static_cast<double>(dim));
    const torch::Tensor angles = ids.select(2, static_cast<int64_t>(a)).to(torch::kFloat64).unsqueeze(-1) * omega;  // [B, L, dim/2]
    const torch::Tensor cos = torch::cos(angles), sin = torch::sin(angles);
    perAxis.push_back(torch::stack({cos, -sin, sin, cos}, -1).view({angles.size(0), angles.size(1), dim / 2, 2, 2}));
  }
  return torch::cat(perAxis, 2).unsqueeze(1).to(torch::kFloat32);
}

torch::Tensor applyFluxRope(const torch::Tensor& x, const torch::Tensor& rotations) {
  std::vector<int64_t> pairs = x.sizes().vec();
  pairs.back() /= 2;
  pairs.push_back(1);
  pairs.push_back(2);
  const torch::Tensor xPairs = x.to(torch::kFloat32).reshape(pairs);  // [B, H, L, D/2, 1, 2]
  // (r00 x0 + r01 x1, r10 x0 + r11 x1) for each pair
  const torch::Tensor rotated = rotations.select(-1, 0) * xPairs.select(-1, 0) + rotations.select(-1, 1) * xPairs.select(-1, 1);
  return rotated.reshape(x.sizes()).to(x.scalar_type());
}

}  // namespace sinter::models

#include "models/layers/group_norm32.h"

#include "kernels/fused_kernels.h"

namespace sinter::models {

GroupNorm32Impl::GroupNorm32Impl(int64_t groups, int64_t channels, double eps) : groups_(groups), eps_(eps) {
  weight = register_parameter("weight", torch::ones({channels}));
  bias = register_parameter("bias", torch::zeros({channels}));
}

torch::Tensor GroupNorm32Impl::forward(const torch::Tensor& x) {
  return torch::group_norm(x.to(torch::kFloat32), groups_, weight.to(torch::kFloat32), bias.to(torch::kFloat32), eps_)
      .to(x.scalar_type());
}

torch::Tensor GroupNorm32Impl::normalize(const torch::Tensor& x, bool fused) {
  if (fused && x.is_cuda()) return kernels::groupNorm(x, weight, bias, groups_, eps_);
  return forward(x);
}

torch::Tensor GroupNorm32Impl::forwardThenSilu(const torch::Tensor& x, bool fused) {
  if (fused && x.is_cuda()) return kernels::groupNormSilu(x, weight, bias, groups_, eps_);
  return torch::silu(forward(x));
}

}  // namespace sinter::models

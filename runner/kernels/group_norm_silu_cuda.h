#pragma once
// The GroupNorm+SiLU kernels' launchers (group_norm_silu.cu), for group_norm_silu.cpp's autograd
// function. x is a contiguous [N, C, *] tensor; weight and bias are float32 [C]; the statistics
// mean and rstd are float32 [N, groups].
#include <ATen/ATen.h>

#include <tuple>

namespace sinter::kernels {

// silu(group_norm(x)) in x's dtype, with the statistics it used (for the backward pass).
std::tuple<at::Tensor, at::Tensor, at::Tensor> groupNormSiluForwardCuda(const at::Tensor& x, const at::Tensor& weight,
                                                                        const at::Tensor& bias, int64_t groups, double eps);

// d x, and the per-(sample, channel) sums the weight and bias gradients are made of:
// sum over the spatial positions of dz and of dz * xhat, where z = xhat * weight + bias and
// dz = d output * silu'(z). Both float32 [N, C].
std::tuple<at::Tensor, at::Tensor, at::Tensor> groupNormSiluBackwardCuda(const at::Tensor& gradOutput, const at::Tensor& x,
                                                                         const at::Tensor& weight, const at::Tensor& bias,
                                                                         const at::Tensor& mean, const at::Tensor& rstd,
                                                                         int64_t groups);

}  // namespace sinter::kernels

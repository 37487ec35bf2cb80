#pragma once
// The GroupNorm+SiLU kernels' launchers (group_norm_silu.cu), for group_norm_silu.cpp's autograd
// function. x is a contiguous [N, C, *] tensor or a channels_last [N, C, H, W] one (NHWC kernels:
// a group's channels adjacent within a pixel); weight and bias are float32 [C]; the statistics mean
// and rstd are float32 [N, groups]. `silu` false: the plain GroupNorm, by the same kernels.
#include <ATen/ATen.h>

#include <tuple>

namespace sinter::kernels {

// The layout the kernels read x in: channels_last for a 4-d x laid out so (not one that is also
// contiguous, as [N, C, 1, 1]), contiguous otherwise (another layout is copied to it first).
inline at::MemoryFormat groupNormLayout(const at::Tensor& x) {
  return x.dim() == 4 && !x.is_contiguous() && x.suggest_memory_format() == at::MemoryFormat::ChannelsLast
             ? at::MemoryFormat::ChannelsLast
             : at::MemoryFormat::Contiguous;
}

// silu(group_norm(x)) in x's dtype and layout, with the statistics it used (for the backward pass).
std::tuple<at::Tensor, at::Tensor, at::Tensor> groupNormSiluForwardCuda(const at::Tensor& x, const at::Tensor& weight,
                                                                        const at::Tensor& bias, int64_t groups, double eps,
                                                                        bool silu);

// d x, and the per-(sample, channel) sums the weight and bias gradients are made of:
// sum over the spatial positions of dz and of dz * xhat, where z = xhat * weight + bias and
// dz = d output * silu'(z). Both float32 [N, C]. gradOutput in x's layout.
std::tuple<at::Tensor, at::Tensor, at::Tensor> groupNormSiluBackwardCuda(const at::Tensor& gradOutput, const at::Tensor& x,
                                                                         const at::Tensor& weight, const at::Tensor& bias,
                                                                         const at::Tensor& mean, const at::Tensor& rstd,
                                                                         int64_t groups, bool silu);

}  // namespace sinter::kernels

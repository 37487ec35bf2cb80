#pragma once
// The GEGLU kernels' launchers (geglu.cu), for geglu.cpp's autograd function.
#include <ATen/ATen.h>

namespace sinter::kernels {

// value * gelu(gate) of contiguous [..., 2n] into a new [..., n].
at::Tensor gegluForwardCuda(const at::Tensor& projected);
// d(projected) [..., 2n] from projected and d(output) [..., n]: d value = g * gelu(gate),
// d gate = g * value * gelu'(gate).
at::Tensor gegluBackwardCuda(const at::Tensor& projected, const at::Tensor& gradOutput);

}  // namespace sinter::kernels

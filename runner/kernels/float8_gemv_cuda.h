#pragma once
// The launchers of fp8_scaled's few-row products (float8_gemv.cu), for float8_gemv.cpp.
#include <ATen/ATen.h>

namespace sinter::kernels {

// y [M, N] = x [M, K] (W * scale)^T (+ bias [N]) in x's dtype, W [N, K] e4m3 codes (K a multiple
// of 16, rows 16-byte aligned), scale float32: one value, or one per row of W ([N, 1]).
at::Tensor float8GemvForwardCuda(const at::Tensor& x, const at::Tensor& stored, const at::Tensor& scale, const at::Tensor& bias);

// dx [M, K] = g [M, N] (W * scale) in g's dtype, the same W and scale.
at::Tensor float8GemvBackwardCuda(const at::Tensor& g, const at::Tensor& stored, const at::Tensor& scale);

}  // namespace sinter::kernels

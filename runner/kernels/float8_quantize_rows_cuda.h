#pragma once
// fp8_fast's rowwise quantisation kernel's launcher (float8_quantize_rows.cu), for float8_quantize_rows.cpp.
#include <ATen/ATen.h>

#include <utility>

namespace sinter::kernels {

// x [rows, K] (contiguous, K a multiple of 8, data aligned to 8 elements; float32, float16 or
// bfloat16) -> (data [rows, K] in `float8Type`: float8_e4m3fn or float8_e5m2, scale [rows, 1]
// float32), a warp or a block a row: the row's amax, factor = bfloat16(formatMax * (1 / max(amax,
// smallestAmax))), data = float8(x * factor), scale = 1 / factor (fused_kernels.h).
std::pair<at::Tensor, at::Tensor> float8QuantizeRowsCuda(const at::Tensor& x, at::ScalarType float8Type, float formatMax,
                                                         float smallestAmax);

}  // namespace sinter::kernels

#pragma once
// The launcher of fp8_fast's LoRA accumulation (low_rank_accumulate.cu), for low_rank_accumulate.cpp.
#include <ATen/ATen.h>

namespace sinter::kernels {

// out [M, N] += alpha * a [M, R] b [R, N], all bfloat16: out and a contiguous, b either row-major
// ([R, N], strides [N, 1]) or column-major ([R, N], strides [1, R]: a weight [N, R] transposed);
// M a multiple of 16, N of 128, R one of 16, 32, 64, 128 (low_rank_accumulate.cpp checks).
void lowRankAccumulateCuda(at::Tensor& out, const at::Tensor& a, const at::Tensor& b, float alpha);

}  // namespace sinter::kernels

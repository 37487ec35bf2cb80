#pragma once
// fp8_base's upcast kernel's launcher (float8_upcast.cu), for float8_upcast.cpp.
#include <ATen/ATen.h>

namespace sinter::kernels {

// A contiguous float8 e4m3 tensor (data 8-byte aligned) as a new tensor of `dtype` (float32,
// float16, bfloat16 or float64): every e4m3 value is exact in each of them.
at::Tensor float8UpcastCuda(const at::Tensor& stored, at::ScalarType dtype);

}  // namespace sinter::kernels

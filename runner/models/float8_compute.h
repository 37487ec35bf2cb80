#pragma once
// fp8_fast: a frozen Linear's GEMMs on FP8 tensor cores (at::_scaled_mm, cuBLASLt): operands in
// float8 with a float32 scale per tensor (value = data * scale), the product in the activations'
// dtype. Needs libtorch 2.4 or newer (at::_scaled_mm with required scales) and a CUDA GPU of compute
// capability 8.9 or higher (Ada, Hopper and later have FP8 tensor cores).
#include <torch/torch.h>

#include <string>

namespace sinter::models {

// A tensor in float8 with its per-tensor dequantisation scale: value = data * scale, with scale a
// float32 scalar tensor on data's device (read by the GEMM on the device: no host sync).
struct Float8Tensor {
  torch::Tensor data;
  torch::Tensor scale;
};

// The two float8 formats: e4m3 (weights, activations) and e5m2 (gradients: wider range).
enum class Float8Format { E4M3, E5M2 };

// Whether this libtorch has float8 types and at::_scaled_mm's current signature (2.4 and newer).
bool float8ComputeInBuild();

// Why fp8_fast cannot run on `device` in this build ("" when it can): no at::_scaled_mm in this
// libtorch, not a CUDA device, or a GPU below compute capability 8.9. Names the option and the device.
std::string float8ComputeRefusal(const torch::Device& device);

// The largest finite value of the format: 448 (e4m3) or 57344 (e5m2).
double float8Max(Float8Format format);

// The format's torch dtype (throws std::runtime_error in a libtorch without float8).
torch::ScalarType float8ScalarType(Float8Format format);

// A per-tensor scale, as musubi-tuner's fp8_scaled computes it: amax / max(fp8Type), with amax
// clamped away from zero (an all-zero tensor gets a tiny scale, not a division by zero), in float32,
// rounded to a bfloat16 value (so a bfloat16 multiply by it, or by its reciprocal, is exact in the
// factor). `amax` is any floating tensor (a scalar for a per-tensor scale).
torch::Tensor float8ScaleFromAmax(const torch::Tensor& amax, Float8Format format);

// `x` (bfloat16, float16 or float32) in `format` with its scale from its own amax, computed on
// x's device without a host sync (usable inside CUDA-graph capture). A bfloat16 x is multiplied
// by max / amax rounded to bfloat16 and the returned scale is that factor's reciprocal, so data
// and scale agree; other dtypes scale in float32. Throws without float8.
Float8Tensor quantizePerTensor(const torch::Tensor& x, Float8Format format);

// a b with a [M, K] row-major (contiguous) and b [K, N] column-major (b.t() contiguous), both
// float8 (not both e5m2), K and N multiples of 16, on a GPU with FP8 tensor cores; the result
// [M, N] in `outDtype` (bfloat16, float16 or float32), plus `bias` [N] where defined.
torch::Tensor float8Matmul(const Float8Tensor& a, const Float8Tensor& b, const torch::Tensor& bias,
                           torch::ScalarType outDtype);

}  // namespace sinter::models

#pragma once
// fp8_fast: a frozen Linear's GEMMs on FP8 tensor cores (at::_scaled_mm): operands in float8 with
// float32 scales (value = data * scale), either one per tensor or, rowwise, one per row of the
// first operand (a token) and one per column of the second (a weight's output channel), the product
// in the activations' dtype. Needs libtorch 2.4 or newer (at::_scaled_mm with required scales) and a
// CUDA GPU of compute capability 8.9 or higher (Ada, Hopper and later have FP8 tensor cores).
#include <torch/torch.h>

#include <string>

namespace sinter::models {

// A tensor in float8 with its dequantisation scale: value = data * scale, with scale float32 on
// data's device (read by the GEMM on the device: no host sync): a scalar (per tensor), [rows, 1]
// (per row) or, for a GEMM's second operand [K, N], [1, N] (per column).
struct Float8Tensor {
  torch::Tensor data;
  torch::Tensor scale;
};

// The two float8 formats: e4m3 (more precision: weights, activations, rowwise gradients) and e5m2
// (more range: per-tensor gradients).
enum class Float8Format { E4M3, E5M2 };

// How fp8_fast scales the operands of its GEMMs: one scale per tensor (musubi-tuner's "tensor"
// mode), or rowwise: activations and gradients per row (token), weights per output channel (and the
// backward's transposed copy per input channel), at::_scaled_mm's RowWise x RowWise form.
enum class Float8Scaling { Tensor, Row };

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

// Per row of x [rows, K] (bfloat16, float16 or float32): the factor that maps the row's amax
// (clamped away from zero) onto the format's largest value, max * (1 / amax) in float32 rounded to
// a bfloat16 value, as [rows, 1] float32. Needs no float8 types (the CPU tests check it on any
// libtorch). x * factor is exact in float32 for bfloat16 and float16 x.
torch::Tensor float8RowFactors(const torch::Tensor& x, Float8Format format);

// x [rows, K] in `format` per row: data = float8(x * factor) (float32 product, one rounding to the
// format), scale [rows, 1] = 1 / factor, by torch operators on x's device: the reference the fused
// kernel (kernels::float8QuantizeRows) matches bit for bit. |x * factor| <= max * (1 + 2^-8 + 2^-23),
// which the cast rounds to max. Throws without float8.
Float8Tensor quantizeRowsReference(const torch::Tensor& x, Float8Format format);

// The same through the fused kernel where it takes x (kernels::float8QuantizeRowsFits: a CUDA
// build, contiguous rows of a multiple of 16), else quantizeRowsReference.
Float8Tensor quantizeRows(const torch::Tensor& x, Float8Format format);

// a b with a [M, K] row-major (contiguous) and b [K, N] column-major (b.t() contiguous), both
// float8 (not both e5m2), K and N multiples of 16, on a GPU with FP8 tensor cores; the result
// [M, N] in `outDtype` (bfloat16, float16 or float32), plus `bias` [N] where defined. Scales both
// per tensor, or rowwise (a's [M, 1], b's [1, N]; b in e4m3): PyTorch's rowwise kernels write
// bfloat16 (CUTLASS's only output), so another outDtype is a cast of it. `fastAccumulation`:
// at::_scaled_mm's use_fast_accum (Hopper's FP8 accumulator without periodic promotion to float32:
// faster, less exact over long K), not an option (the GPU check measures it).
torch::Tensor float8Matmul(const Float8Tensor& a, const Float8Tensor& b, const torch::Tensor& bias,
                           torch::ScalarType outDtype, bool fastAccumulation = false);

}  // namespace sinter::models

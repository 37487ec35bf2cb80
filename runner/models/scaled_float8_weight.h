#pragma once
// fp8_scaled (musubi-tuner's name): frozen Linear weights stored as float8 e4m3 with float32 scales
// (value = data * scale, computed once when the weights are placed), rather than fp8_base's plain
// cast: one scale per tensor (musubi's "tensor" mode) where the weight is dequantised per call, one
// per output channel where fp8_fast multiplies it as stored on FP8 tensor cores
// (models/float8_compute.h): forward y = x W^T with x quantized per row (token) to e4m3, backward
// dx = dy W with dy quantized per row (e4m3 by default), against a transposed copy of W quantized per
// input channel (the FP8 GEMM reads its second operand column-major only), or in the activations'
// dtype where the backward stays unquantized. Float8Scaling::Tensor keeps the per-tensor form
// throughout (the GPU check compares both).
#include <torch/torch.h>

#include "models/float8_compute.h"

namespace sinter::models {

// How the frozen base's GEMMs run with fp8_scaled.
struct Float8ScaledOptions {
  bool fastForward = false;   // fp8_fast: y = x W^T on FP8 tensor cores
  bool fastBackward = false;  // dx = dy W on FP8 tensor cores too (else dequantized W in dy's dtype)
  Float8Scaling scaling = Float8Scaling::Row;        // of the FP8 GEMMs' operands (fastForward)
  Float8Format gradientFormat = Float8Format::E4M3;  // dy's format in the FP8 backward
  bool fastAccumulation = false;  // at::_scaled_mm's use_fast_accum: no option, the GPU check's FP8_FAST_ACCUM
};

// Every Linear weight under `root` that is not already served (blocks_to_swap's streamed ones are)
// quantized on `device` and kept there: e4m3 data in the module's `weight`, the scale and (with
// fastBackward) the transposed copy and its scale in its ServedWeight. Returns how many Linears.
// Throws std::runtime_error naming the option without float8 types in this libtorch.
int storeLinearsInScaledFloat8(torch::nn::Module& root, const torch::Device& device, const Float8ScaledOptions& options);

// fp8_fast_backward flipped on the Linears under `root` stored with a transposed copy (the
// forward stays FP8), dy in `gradientFormat`: the GPU check compares the backward's forms on one
// stored model. Returns how many.
int setFloat8ComputeBackward(torch::nn::Module& root, bool on, Float8Format gradientFormat = Float8Format::E4M3);

// One weight [out, in] (any floating dtype, any device) as e4m3 with its scale, on `device`: what
// storeLinearsInScaledFloat8 stores for each Linear. Float8Scaling::Row: a scale per row, [out, 1]
// (bfloat16 values, as float8ScaleFromAmax gives them), else one scalar. `transposed`: W^T
// [in, out] instead, contiguous, its rows (the input channels) scaled by their own amax ([in, 1]).
Float8Tensor quantizeWeight(const torch::Tensor& weight, const torch::Device& device, bool transposed = false,
                            Float8Scaling scaling = Float8Scaling::Tensor);

// A weight's quantized form as at::_scaled_mm's second operand [K, N] (column-major): q.data.t(),
// with a per-row scale [N, 1] turned into the per-column [1, N] the GEMM takes.
Float8Tensor asSecondOperand(const Float8Tensor& q);

}  // namespace sinter::models

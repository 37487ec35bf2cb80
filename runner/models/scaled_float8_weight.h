#pragma once
// fp8_scaled (musubi-tuner's name): frozen Linear weights stored as float8 e4m3 with a float32
// scale per tensor (value = data * scale, the scale from the weight's amax, computed once when the
// weights are placed), rather than fp8_base's plain cast. Served upcast and scaled per call, or,
// with fp8_fast, multiplied on FP8 tensor cores as they are (models/float8_compute.h): forward
// y = x W^T with x quantized per tensor to e4m3; backward dx = dy W with dy quantized per tensor
// (e5m2 by default), from a transposed copy of W kept for it (the FP8 GEMM reads its second
// operand column-major only), or in the activations' dtype where the backward stays unquantized.
#include <torch/torch.h>

#include "models/float8_compute.h"

namespace sinter::models {

// How the frozen base's GEMMs run with fp8_scaled.
struct Float8ScaledOptions {
  bool fastForward = false;   // fp8_fast: y = x W^T on FP8 tensor cores
  bool fastBackward = false;  // dx = dy W on FP8 tensor cores too (else dequantized W in dy's dtype)
  Float8Format gradientFormat = Float8Format::E5M2;  // dy's format in the FP8 backward
};

// Every Linear weight under `root` that is not already served (blocks_to_swap's streamed ones are)
// quantized on `device` and kept there: e4m3 data in the module's `weight`, the scale and (with
// fastBackward) the transposed copy in its ServedWeight. Returns how many Linears. Throws
// std::runtime_error naming the option without float8 types in this libtorch.
int storeLinearsInScaledFloat8(torch::nn::Module& root, const torch::Device& device, const Float8ScaledOptions& options);

// fp8_fast_backward flipped on the Linears under `root` stored with a transposed copy (the
// forward stays FP8): the GPU check compares both backward forms on one stored model. Returns how many.
int setFloat8ComputeBackward(torch::nn::Module& root, bool on);

// One weight [out, in] (any floating dtype, any device) as e4m3 with its per-tensor scale, on
// `device`: what storeLinearsInScaledFloat8 stores for each Linear. `transposed`: the data of
// W^T [in, out] instead, contiguous (the same values, for the backward's column-major operand).
Float8Tensor quantizeWeight(const torch::Tensor& weight, const torch::Device& device, bool transposed = false);

}  // namespace sinter::models

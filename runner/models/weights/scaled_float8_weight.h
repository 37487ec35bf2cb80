#pragma once
// fp8_scaled (musubi-tuner's name): frozen Linear weights stored as float8 e4m3 with float32 scales
// (value = data * scale, computed once when the weights are placed), rather than fp8_base's plain
// cast: one scale per tensor (musubi's "tensor" mode) where the weight is dequantised per call, one
// per output channel where fp8_fast multiplies it as stored on FP8 tensor cores
// (models/weights/float8_compute.h): forward y = x W^T with x quantized per row (token) to e4m3, backward
// dx = dy W with dy quantized per row (e4m3 by default), against a transposed copy of W quantized per
// input channel (the FP8 GEMM reads its second operand column-major only), or in the activations'
// dtype where the backward stays unquantized. Float8Scaling::Tensor keeps the per-tensor form
// throughout (the GPU check compares both). On the GPU a Linear not multiplied in FP8 that sees at
// most 4 rows (FLUX's modulations) is multiplied from its codes by kernels::float8GemvForward /
// float8GemvBackward rather than dequantised per call.
#include <torch/torch.h>

#include <functional>
#include <string>

#include "models/weights/float8_compute.h"

namespace sinter::models {

// How the frozen base's GEMMs run with fp8_scaled.
struct Float8ScaledOptions {
  bool fastForward = false;   // fp8_fast: y = x W^T on FP8 tensor cores
  bool fastBackward = false;  // dx = dy W on FP8 tensor cores too (else dequantized W in dy's dtype)
  Float8Scaling scaling = Float8Scaling::Row;        // of the FP8 GEMMs' operands (fastForward)
  Float8Format gradientFormat = Float8Format::E4M3;  // dy's format in the FP8 backward
  // at::_scaled_mm's use_fast_accum (Hopper's FP8 accumulator without periodic promotion to float32)
  // per pass: on in both, as fp8_fast trains (within its quality bounds and 3-4% of the step faster,
  // tests/gpu/RESULTS.md); no option. SINTER_FP8_FAST_ACCUM and the GPU check's FP8_FAST_ACCUM
  // measure the other forms (float8FastAccumulationFromEnvironment).
  bool fastAccumulationForward = true;
  bool fastAccumulationBackward = true;
};

// SINTER_FP8_FAST_ACCUM (or `variable`) = 0, forward, or 1 (both passes): the passes whose FP8 GEMMs
// accumulate fast, set on `options`. A diagnostic for measuring the form (tests/gpu/README.md);
// unset leaves `options` as they are. Throws std::invalid_argument naming the variable and value.
void float8FastAccumulationFromEnvironment(Float8ScaledOptions& options, const char* variable = "SINTER_FP8_FAST_ACCUM");

// Which Linears under a root (by module path, e.g. "double_blocks.0.img_mod.lin") multiply in FP8.
using Float8LinearFilter = std::function<bool(const std::string& path)>;

// Every Linear weight under `root` that is not already served (blocks_to_swap's streamed ones are)
// quantized on `device` and kept there: e4m3 data in the module's `weight`, the scale and (with
// fastBackward) the transposed copy and its scale in its ServedWeight. With fastForward, the
// Linears `multipliesInFloat8` leaves out (empty: none) are stored alike but dequantised per call.
// Returns how many Linears. Throws std::runtime_error naming the option without float8 types in
// this libtorch.
int storeLinearsInScaledFloat8(torch::nn::Module& root, const torch::Device& device, const Float8ScaledOptions& options,
                               const Float8LinearFilter& multipliesInFloat8 = {});

// fp8_fast's products switched on the Linears under `root` that `which` selects (empty: all) and
// that were stored to multiply in FP8: the forward, and the backward (dy in `gradientFormat`)
// where a transposed copy was stored; forward off dequantises both passes. The GPU check compares
// the forms on one stored model. Returns how many Linears took the switch.
int setFloat8Compute(torch::nn::Module& root, bool forward, bool backward, Float8Format gradientFormat = Float8Format::E4M3,
                     const Float8LinearFilter& which = {});

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

#pragma once
// The project's own CUDA kernels (nvcc, built only in CUDA builds; backend=inductor uses them,
// DESIGN.md §6), each with autograd: one kernel for the forward pass and one for the backward pass
// where the stock operators take several and write intermediates to memory.
#include <torch/torch.h>

#include <vector>

#include "kernels/shared_gradient.h"

namespace sinter::kernels {

// Whether this build has them (a CUDA libtorch and nvcc).
bool fusedKernelsCompiledIn();

// SGM's GEGLU activation: for `projected` = [..., 2n] holding value and gate side by side,
// value * gelu(gate) (exact, erf) as [..., n]. Computed in float32 and rounded once to the input's
// dtype. CUDA tensors of float32, float16 or bfloat16; throws in a build without the kernels.
torch::Tensor geglu(const torch::Tensor& projected);

// silu(group_norm(x, groups, weight, bias, eps)) for x = [N, C, *]: the statistics and the affine
// map in float32 (as the U-Net's GroupNorm32), SiLU applied before rounding once to x's dtype.
// The backward pass recomputes the norm from x and the kept statistics. CUDA tensors of float32,
// float16 or bfloat16; a channels_last [N, C, H, W] x is read as it lies (NHWC kernels) and its
// output and gradient are channels_last too; another non-contiguous x is made contiguous. Throws in
// a build without the kernels.
torch::Tensor groupNormSilu(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, int64_t groups,
                            double eps);
// group_norm(x, groups, weight, bias, eps) alone (the norm before a SpatialTransformer): the same
// kernels with the SiLU left out, the same numerics and layouts.
torch::Tensor groupNorm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, int64_t groups,
                        double eps);

// FLUX's QK RMSNorm and RoPE in one pass: qkv = [B, L, 3 * heads * D] (a Linear's output; rows may
// be strided, the last dimension contiguous) -> q and k RMS-normed (eps, scales [D]) and rotated
// pair by pair by rotations [B or 1, 1, L, D/2, 2, 2] (float32), and v, all [B, heads, L, D] in
// qkv's dtype, laid out token-major ([B, L, heads, D] in memory: the attention's output then comes
// back token-major). Norm and rotation in float32, rounded once; the backward pass recomputes from
// qkv and the rows' kept 1 / rms, and reads the incoming gradients where they are. qkv's gradient is
// written where `into` says (a part of a split sharing its gradient, shared_gradient.h; by default a
// fresh tensor). CUDA tensors of float32, float16 or bfloat16, heads of qkNormRopeFits() channels;
// throws otherwise, and in a build without the kernels.
bool qkNormRopeFits(int64_t headDim);  // a multiple of 4 up to 256 (FLUX: 128)
std::vector<torch::Tensor> fluxQkNormRope(const torch::Tensor& qkv, const torch::Tensor& qScale, const torch::Tensor& kScale,
                                          const torch::Tensor& rotations, int64_t heads, const GradientInto& into = {},
                                          double eps = 1e-6);
// The same for two streams with their own weights (FLUX's double block: text, then image) whose q,
// k and v are written side by side as one sequence of La + Lb tokens, with no concatenation;
// rotations are the joint sequence's [B or 1, 1, La + Lb, D/2, 2, 2].
std::vector<torch::Tensor> fluxJointQkNormRope(const torch::Tensor& qkvA, const torch::Tensor& qScaleA,
                                               const torch::Tensor& kScaleA, const torch::Tensor& qkvB,
                                               const torch::Tensor& qScaleB, const torch::Tensor& kScaleB,
                                               const torch::Tensor& rotations, int64_t heads, double eps = 1e-6);

// FLUX's modulation around each block's attention and MLP, one kernel each way where the stock
// operators write a normalized copy, a scaled copy and a shifted one (and in backward sum each).
// x, residual and y: [B, L, C]; shift, scale and gate: [B or 1, 1, C] (chunks of the modulation
// Linear's output are read in place). Computed in float32 and rounded once; the weight gradients
// are summed per tile of rows in a fixed order (the same bits each run). CUDA tensors of float32,
// float16 or bfloat16 whose rows fluxRowsFitKernels() accepts; throws otherwise, and in a build
// without the kernels.
bool fluxRowsFitKernels(const torch::Tensor& x);  // [B, L, C], C a multiple of 4 up to 4096
// (1 + scale) * layer_norm(x, no affine, eps) + shift
torch::Tensor fluxLayerNormModulate(const torch::Tensor& x, const torch::Tensor& shift, const torch::Tensor& scale,
                                    double eps = 1e-6);
// residual + gate * y
torch::Tensor fluxGatedResidual(const torch::Tensor& residual, const torch::Tensor& gate, const torch::Tensor& y);

// The single block's linear2 input, cat(attended, gelu_tanh(mlp), -1), written once: attended
// [B, L, H, D] or [B, L, H * D] (any strides: the attention's output transposed), mlp [B, L, M] (rows
// may be strided, as linear1's output split); the GELU read with vector loads, not through the
// strided copy the stock operators take, and no separate concatenation. Its gradient for mlp is one
// kernel (written where `into` says, as fluxQkNormRope's); for attended, the incoming gradient's
// columns made dense (cuDNN's attention backward reads its output gradient with its output's
// strides). CUDA tensors; throws in a build without the kernels.
torch::Tensor fluxAttentionGeluJoin(const torch::Tensor& attended, const torch::Tensor& mlp,
                                    const GradientInto& into = {});

// fp8_base's per-call upcast of a frozen weight: a float8 e4m3 tensor as `dtype` (float64, float32,
// float16 or bfloat16; exact, as every e4m3 value is representable in them), with 8-byte loads and vector
// stores, where PyTorch's cast converts element by element (~1 TB/s on the H200). Bit for bit
// PyTorch's cast, so every fp8_base run uses it, not only backend=inductor. Takes contiguous CUDA
// e4m3 tensors (float8UpcastFits); throws otherwise, and in a build without the kernels.
bool float8UpcastFits(const torch::Tensor& stored);
torch::Tensor float8Upcast(const torch::Tensor& stored, torch::ScalarType dtype);

// fp8_fast's rowwise quantisation of an activation or gradient, one pass a row where the torch
// operators take an amax reduction, scalar kernels, a multiply and a cast: x [rows, K] -> {data
// [rows, K] in `float8Type` (float8_e4m3fn or float8_e5m2), scale [rows, 1] float32}, value = data *
// scale, with per row factor = bfloat16(formatMax * (1 / max(amax, smallestAmax))) (float32
// arithmetic, each step rounded to nearest), data = float8(x * factor), scale = 1 / factor. Bit
// for bit models::quantizeRowsReference's torch operators on the same GPU (finite rows; a NaN row
// gets NaN on both). No host sync (usable inside CUDA-graph capture). Takes contiguous CUDA
// bfloat16, float16 or float32 rows whose length is a multiple of 16 (float8QuantizeRowsFits);
// throws otherwise, and in a build without the kernels.
bool float8QuantizeRowsFits(const torch::Tensor& x);
std::vector<torch::Tensor> float8QuantizeRows(const torch::Tensor& x, torch::ScalarType float8Type, double formatMax,
                                              double smallestAmax);

// fp8_scaled's products of a few rows (FLUX's modulations and embedders: one row a sample) with a
// weight stored as e4m3 codes W [N, K] and a float32 scale (one, or one a row [N, 1]), reading
// the codes as they are stored, where dequantising first writes and reads W again in bf16:
// forward y [M, N] = x [M, K] (scale * W)^T (+ bias), backward dx [M, K] = g [M, N] (scale * W),
// in the rows' dtype, float32 accumulation (the backward sums fixed chunks of W's rows in order:
// deterministic). No host sync. Takes contiguous CUDA rows, M <= 4, K a multiple of 16 up to
// 16384 (float8GemvFits, with `rows` x or g); throws otherwise, and in a build without the kernels.
constexpr int64_t kFloat8GemvMaxRows = 4;  // the accumulators are registers a row
bool float8GemvFits(const torch::Tensor& rows, const torch::Tensor& stored, const torch::Tensor& scale);
torch::Tensor float8GemvForward(const torch::Tensor& x, const torch::Tensor& stored, const torch::Tensor& scale,
                                const torch::Tensor& bias);
torch::Tensor float8GemvBackward(const torch::Tensor& g, const torch::Tensor& stored, const torch::Tensor& scale);

}  // namespace sinter::kernels

#pragma once
// The fused QK RMSNorm + RoPE kernels' launchers (qk_norm_rope.cu), for qk_norm_rope.cpp's
// autograd function. Shapes: qkv [B, L, 3 * H * D] with a contiguous last dimension (rows may be
// strided, as a narrow of the single block's linear1 output is); D a multiple of 4 up to 256;
// scales [D] float32 contiguous; rotations [Br, 1, L, D / 2, 2, 2] float32 with Br 1 or B, any batch
// and token strides, each token's D / 2 x 2 x 2 packed. Inputs whose strides or addresses do not
// allow vector loads are copied first.
#include <ATen/ATen.h>

#include <vector>

namespace sinter::kernels {

// Writes q, k and v into the given [B, H, L, D] tensors (qkv's dtype, D contiguous, any aligned
// strides of B, H and L: token-major memory, or a stream's rows of the joint sequence's) and
// returns each q and k row's 1 / rms as [2, B, L, H] float32.
at::Tensor qkNormRopeForwardCuda(const at::Tensor& qkv, const at::Tensor& qScale, const at::Tensor& kScale,
                                 const at::Tensor& rotations, int64_t heads, double eps, const at::Tensor& q,
                                 const at::Tensor& k, const at::Tensor& v);
// d qkv from the saved inputs, the rows' 1 / rms and d q, d k, d v ([B, H, L, D] in qkv's dtype,
// read where they are: any strides of B, H and L), written into gradQkv: qkv's shape, the last
// dimension contiguous, rows at any stride that allows vector stores (a column range of a wider
// gradient, as the single block's linear1 output gradient is).
void qkNormRopeBackwardCuda(const at::Tensor& qkv, const at::Tensor& qScale, const at::Tensor& kScale,
                            const at::Tensor& rotations, const at::Tensor& rrms, const at::Tensor& gradQ,
                            const at::Tensor& gradK, const at::Tensor& gradV, int64_t heads, const at::Tensor& gradQkv);

}  // namespace sinter::kernels

#pragma once
// The fused FLUX modulation kernels' launchers (flux_modulation.cu), for flux_modulation.cpp's
// autograd functions. x, y, residual and gradients: [B, L, C] contiguous; shift, scale and gate:
// [B, 1, C] with contiguous channels and any batch stride (chunks of the modulation Linear's output).
#include <ATen/ATen.h>

#include <vector>

namespace sinter::kernels {

struct RowsGeometry {
  int64_t batch, length, channels;
  int64_t modBatchStride;  // shift / scale / gate: elements from one sample's vector to the next
};

// Whether rows of `channels` fit the kernels (a multiple of kVec, at most 4096); pointers and
// strides must also be multiples of kVec elements (vector_alignment.h).
bool rowsKernelsFit(int64_t channels);

// (1 + scale) * layer_norm(x) + shift -> {out, mean [B, L], rstd [B, L]} (float32 statistics).
std::vector<at::Tensor> layerNormModulateForwardCuda(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale,
                                                     const RowsGeometry& g, double eps);
// -> {d x, [B, 2, C] float32: d scale, d shift}
std::vector<at::Tensor> layerNormModulateBackwardCuda(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& mean,
                                                      const at::Tensor& rstd, const at::Tensor& gradOut, const RowsGeometry& g);
// residual + gate * y
at::Tensor gatedResidualForwardCuda(const at::Tensor& residual, const at::Tensor& gate, const at::Tensor& y, const RowsGeometry& g);
// -> {d y, [B, C] float32: d gate}
std::vector<at::Tensor> gatedResidualBackwardCuda(const at::Tensor& gate, const at::Tensor& y, const at::Tensor& gradOut,
                                                  const RowsGeometry& g);
// gelu(approximate="tanh") over [..., cols] rows that may each sit at their own stride (rows at a
// uniform row stride, the last dimension contiguous): out = gelu(in), or with gradOut defined,
// out = gradOut * gelu'(in). `out` is written in place (it may be a column range of a wider tensor).
void geluTanhRowsCuda(const at::Tensor& in, const at::Tensor& gradOut, at::Tensor& out);
// out = in over such rows, with vector loads (a strided copy by TensorIterator walks 4-d indices
// element by element).
void copyRowsCuda(const at::Tensor& in, at::Tensor& out);

}  // namespace sinter::kernels

#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "kernels/qk_norm_rope_cuda.h"

namespace sinter::kernels {

namespace {

constexpr int kWarpsPerBlock = 8;

// Where one row (sample b, token l, head h; part 0 = q, 1 = k) lives.
struct RowGeometry {
  int64_t batch, length, heads, dim;
  int64_t qkvBatchStride, qkvRowStride;  // qkv's strides of b and l (elements)
  int64_t rotBatchStride, rotRowStride;  // rotations' strides of b (0 when shared) and l
};

__device__ __forceinline__ float warpSum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// One warp per (part, b, l, h): mean of squares, then each channel pair (2j, 2j+1) normed,
// scaled and rotated: out = R_j (x * rrms * s), R_j = [[r00, r01], [r10, r11]]. Rounded once.
template <typename T>
__global__ void qkNormRopeForward(const T* __restrict__ qkv, const float* __restrict__ qScale, const float* __restrict__ kScale,
                                  const float* __restrict__ rotations, T* __restrict__ q, T* __restrict__ k,
                                  float* __restrict__ rrmsOut, RowGeometry g, float eps) {
  const int lane = threadIdx.x & 31;
  const int64_t rowsPerPart = g.batch * g.length * g.heads;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= 2 * rowsPerPart) return;
  const int part = static_cast<int>(row / rowsPerPart);
  const int64_t r = row - part * rowsPerPart;  // (b, l, h) row-major
  const int64_t h = r % g.heads, l = (r / g.heads) % g.length, b = r / (g.heads * g.length);
  const T* x = qkv + b * g.qkvBatchStride + l * g.qkvRowStride + (part * g.heads + h) * g.dim;
  const float* scale = part == 0 ? qScale : kScale;
  const float* rot = rotations + b * g.rotBatchStride + l * g.rotRowStride;
  float squares = 0.0f;
  for (int64_t d = lane; d < g.dim; d += 32) {
    const float v = static_cast<float>(x[d]);
    squares += v * v;
  }
  const float rrms = rsqrtf(warpSum(squares) / static_cast<float>(g.dim) + eps);
  T* out = (part == 0 ? q : k) + ((b * g.heads + h) * g.length + l) * g.dim;
  for (int64_t j = lane; j < g.dim / 2; j += 32) {
    const float n0 = static_cast<float>(x[2 * j]) * rrms * scale[2 * j];
    const float n1 = static_cast<float>(x[2 * j + 1]) * rrms * scale[2 * j + 1];
    const float* m = rot + 4 * j;
    out[2 * j] = static_cast<T>(m[0] * n0 + m[1] * n1);
    out[2 * j + 1] = static_cast<T>(m[2] * n0 + m[3] * n1);
  }
  if (lane == 0) rrmsOut[part * rowsPerPart + r] = rrms;
}

// The transpose rotation gives d n; with y = x * rrms: d y = d n * s and
// d x = rrms * (d y - y * mean(d y * y)).
template <typename T>
__global__ void qkNormRopeBackward(const T* __restrict__ qkv, const float* __restrict__ qScale, const float* __restrict__ kScale,
                                   const float* __restrict__ rotations, const float* __restrict__ rrmsIn,
                                   const T* __restrict__ gradQ, const T* __restrict__ gradK, T* __restrict__ gradQkv,
                                   RowGeometry g) {
  const int lane = threadIdx.x & 31;
  const int64_t rowsPerPart = g.batch * g.length * g.heads;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= 2 * rowsPerPart) return;
  const int part = static_cast<int>(row / rowsPerPart);
  const int64_t r = row - part * rowsPerPart;
  const int64_t h = r % g.heads, l = (r / g.heads) % g.length, b = r / (g.heads * g.length);
  const T* x = qkv + b * g.qkvBatchStride + l * g.qkvRowStride + (part * g.heads + h) * g.dim;
  const float* scale = part == 0 ? qScale : kScale;
  const float* rot = rotations + b * g.rotBatchStride + l * g.rotRowStride;
  const T* go = (part == 0 ? gradQ : gradK) + ((b * g.heads + h) * g.length + l) * g.dim;
  const float rrms = rrmsIn[part * rowsPerPart + r];
  float dot = 0.0f;
  for (int64_t j = lane; j < g.dim / 2; j += 32) {
    const float* m = rot + 4 * j;
    const float g0 = static_cast<float>(go[2 * j]), g1 = static_cast<float>(go[2 * j + 1]);
    const float dy0 = (m[0] * g0 + m[2] * g1) * scale[2 * j];
    const float dy1 = (m[1] * g0 + m[3] * g1) * scale[2 * j + 1];
    dot += dy0 * static_cast<float>(x[2 * j]) * rrms + dy1 * static_cast<float>(x[2 * j + 1]) * rrms;
  }
  const float meanDot = warpSum(dot) / static_cast<float>(g.dim);
  T* gx = gradQkv + (b * g.length + l) * 3 * g.heads * g.dim + (part * g.heads + h) * g.dim;
  for (int64_t j = lane; j < g.dim / 2; j += 32) {
    const float* m = rot + 4 * j;
    const float g0 = static_cast<float>(go[2 * j]), g1 = static_cast<float>(go[2 * j + 1]);
    const float dy0 = (m[0] * g0 + m[2] * g1) * scale[2 * j];
    const float dy1 = (m[1] * g0 + m[3] * g1) * scale[2 * j + 1];
    const float y0 = static_cast<float>(x[2 * j]) * rrms, y1 = static_cast<float>(x[2 * j + 1]) * rrms;
    gx[2 * j] = static_cast<T>(rrms * (dy0 - y0 * meanDot));
    gx[2 * j + 1] = static_cast<T>(rrms * (dy1 - y1 * meanDot));
  }
}

RowGeometry geometryOf(const at::Tensor& qkv, const at::Tensor& rotations, int64_t heads, int64_t dim) {
  RowGeometry g;
  g.batch = qkv.size(0);
  g.length = qkv.size(1);
  g.heads = heads;
  g.dim = dim;
  g.qkvBatchStride = qkv.stride(0);
  g.qkvRowStride = qkv.stride(1);
  g.rotBatchStride = rotations.size(0) == 1 ? 0 : rotations.stride(0);
  g.rotRowStride = rotations.stride(2);
  return g;
}

unsigned int blocksFor(int64_t rows) { return static_cast<unsigned int>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock); }

}  // namespace

std::vector<at::Tensor> qkNormRopeForwardCuda(const at::Tensor& qkv, const at::Tensor& qScale, const at::Tensor& kScale,
                                              const at::Tensor& rotations, int64_t heads, double eps) {
  const int64_t dim = qScale.size(0);
  const RowGeometry g = geometryOf(qkv, rotations, heads, dim);
  at::Tensor q = at::empty({g.batch, heads, g.length, dim}, qkv.options());
  at::Tensor k = at::empty_like(q);
  at::Tensor rrms = at::empty({2, g.batch, g.length, heads}, qkv.options().dtype(at::kFloat));
  const int64_t rows = 2 * g.batch * g.length * heads;
  if (rows == 0) return {q, k, rrms};
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, qkv.scalar_type(), "sinter_qk_norm_rope_forward", [&] {
    qkNormRopeForward<scalar_t><<<blocksFor(rows), kWarpsPerBlock * 32, 0, stream>>>(
        qkv.data_ptr<scalar_t>(), qScale.data_ptr<float>(), kScale.data_ptr<float>(), rotations.data_ptr<float>(),
        q.data_ptr<scalar_t>(), k.data_ptr<scalar_t>(), rrms.data_ptr<float>(), g, static_cast<float>(eps));
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {q, k, rrms};
}

at::Tensor qkNormRopeBackwardCuda(const at::Tensor& qkv, const at::Tensor& qScale, const at::Tensor& kScale,
                                  const at::Tensor& rotations, const at::Tensor& rrms, const at::Tensor& gradQ,
                                  const at::Tensor& gradK, int64_t heads) {
  const int64_t dim = qScale.size(0);
  const RowGeometry g = geometryOf(qkv, rotations, heads, dim);
  at::Tensor gradQkv = at::empty({g.batch, g.length, 3 * heads * dim}, qkv.options());
  const int64_t rows = 2 * g.batch * g.length * heads;
  if (rows == 0) return gradQkv;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, qkv.scalar_type(), "sinter_qk_norm_rope_backward", [&] {
    qkNormRopeBackward<scalar_t><<<blocksFor(rows), kWarpsPerBlock * 32, 0, stream>>>(
        qkv.data_ptr<scalar_t>(), qScale.data_ptr<float>(), kScale.data_ptr<float>(), rotations.data_ptr<float>(),
        rrms.data_ptr<float>(), gradQ.data_ptr<scalar_t>(), gradK.data_ptr<scalar_t>(), gradQkv.data_ptr<scalar_t>(), g);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return gradQkv;
}

}  // namespace sinter::kernels

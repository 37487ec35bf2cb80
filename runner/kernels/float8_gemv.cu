#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "kernels/float8_gemv_cuda.h"
#include "kernels/vector_access.cuh"

namespace sinter::kernels {

namespace {

constexpr int kCodes = 16;          // e4m3 codes a thread loads at once (one 16-byte load)
constexpr int kWarpsPerBlock = 8;   // forward: one warp an output channel
constexpr int kRowsPerChunk = 64;   // backward: the rows of W one block sums over

// 16 e4m3 codes as float32, exactly (every e4m3 value is a float16 value), two at a time through
// the hardware conversion.
__device__ __forceinline__ void decode16(const uint4 codes, float (&w)[kCodes]) {
  const uint32_t words[4] = {codes.x, codes.y, codes.z, codes.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const __nv_fp8x2_storage_t pair = static_cast<__nv_fp8x2_storage_t>(words[i] >> (16 * half));
      const __half2 h = __half2(__nv_cvt_fp8x2_to_halfraw2(pair, __NV_E4M3));
      const float2 f = __half22float2(h);
      w[4 * i + 2 * half] = f.x;
      w[4 * i + 2 * half + 1] = f.y;
    }
  }
}

// y[m, n] = scale_n * sum_k x[m, k] W[n, k] (+ bias[n]): a warp an n, lanes over k.
template <typename T, int M>
__global__ void float8GemvForward(const uint8_t* __restrict__ w, const float* __restrict__ scale, bool scalePerRow,
                                  const T* __restrict__ x, const T* __restrict__ bias, T* __restrict__ y, int n, int k) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= n) return;
  const uint8_t* wRow = w + static_cast<int64_t>(row) * k;
  float acc[M] = {};
  for (int c = lane * kCodes; c < k; c += 32 * kCodes) {
    float wv[kCodes];
    decode16(*reinterpret_cast<const uint4*>(wRow + c), wv);
#pragma unroll
    for (int m = 0; m < M; ++m) {
#pragma unroll
      for (int j = 0; j < kCodes / kVec; ++j) {
        float xv[kVec];
        loadFloats(x + static_cast<int64_t>(m) * k + c + j * kVec, xv);
#pragma unroll
        for (int e = 0; e < kVec; ++e) acc[m] = fmaf(xv[e], wv[j * kVec + e], acc[m]);
      }
    }
  }
#pragma unroll
  for (int m = 0; m < M; ++m) acc[m] = warpSum(acc[m]);
  if (lane != 0) return;
  const float s = scale[scalePerRow ? row : 0];
  const float b = bias ? static_cast<float>(bias[row]) : 0.0f;
#pragma unroll
  for (int m = 0; m < M; ++m) y[static_cast<int64_t>(m) * n + row] = static_cast<T>(acc[m] * s + b);
}

// partial[chunk, m, k] = sum over the chunk's rows r of g[m, r] scale_r W[r, k]: a thread 16 k's.
template <typename T, int M>
__global__ void float8GemvBackwardChunk(const uint8_t* __restrict__ w, const float* __restrict__ scale, bool scalePerRow,
                                        const T* __restrict__ g, float* __restrict__ partial, int n, int k) {
  __shared__ float coefficient[kRowsPerChunk][M];  // g[m, r] * scale_r for the chunk's rows
  const int first = blockIdx.x * kRowsPerChunk;
  const int rows = min(kRowsPerChunk, n - first);
  for (int i = threadIdx.x; i < rows * M; i += blockDim.x) {
    const int r = i / M, m = i % M;
    coefficient[r][m] = static_cast<float>(g[static_cast<int64_t>(m) * n + first + r]) * scale[scalePerRow ? first + r : 0];
  }
  __syncthreads();
  const int c = threadIdx.x * kCodes;
  if (c >= k) return;
  float acc[M][kCodes] = {};
  const uint8_t* wChunk = w + static_cast<int64_t>(first) * k + c;
#pragma unroll 4
  for (int r = 0; r < rows; ++r) {
    float wv[kCodes];
    decode16(*reinterpret_cast<const uint4*>(wChunk + static_cast<int64_t>(r) * k), wv);
#pragma unroll
    for (int m = 0; m < M; ++m) {
      const float a = coefficient[r][m];
#pragma unroll
      for (int e = 0; e < kCodes; ++e) acc[m][e] = fmaf(a, wv[e], acc[m][e]);
    }
  }
#pragma unroll
  for (int m = 0; m < M; ++m) {
    float* out = partial + (static_cast<int64_t>(blockIdx.x) * M + m) * k + c;
#pragma unroll
    for (int j = 0; j < kCodes / kVec; ++j)
      *reinterpret_cast<float4*>(out + j * kVec) = make_float4(acc[m][j * kVec], acc[m][j * kVec + 1], acc[m][j * kVec + 2],
                                                               acc[m][j * kVec + 3]);
  }
}

// dx[i] = sum over chunks of partial[chunk, i], in chunk order (deterministic).
template <typename T>
__global__ void sumChunks(const float* __restrict__ partial, int chunks, int64_t size, T* __restrict__ dx) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= size) return;
  float s = 0.0f;
  for (int c = 0; c < chunks; ++c) s += partial[c * size + i];
  dx[i] = static_cast<T>(s);
}

template <typename T, int M>
void launchForward(const at::Tensor& x, const at::Tensor& stored, const at::Tensor& scale, const at::Tensor& bias, at::Tensor& y,
                   cudaStream_t stream) {
  const int n = static_cast<int>(stored.size(0)), k = static_cast<int>(stored.size(1));
  const unsigned blocks = static_cast<unsigned>((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  float8GemvForward<T, M><<<blocks, kWarpsPerBlock * 32, 0, stream>>>(
      static_cast<const uint8_t*>(stored.data_ptr()), scale.data_ptr<float>(), scale.numel() > 1, x.data_ptr<T>(),
      bias.defined() ? bias.data_ptr<T>() : nullptr, y.data_ptr<T>(), n, k);
}

template <typename T, int M>
void launchBackwardChunks(const at::Tensor& g, const at::Tensor& stored, const at::Tensor& scale, at::Tensor& partial,
                          cudaStream_t stream) {
  const int n = static_cast<int>(stored.size(0)), k = static_cast<int>(stored.size(1));
  const int threads = ((k / kCodes + 31) / 32) * 32;
  float8GemvBackwardChunk<T, M><<<static_cast<unsigned>(partial.size(0)), threads, 0, stream>>>(
      static_cast<const uint8_t*>(stored.data_ptr()), scale.data_ptr<float>(), scale.numel() > 1, g.data_ptr<T>(),
      partial.data_ptr<float>(), n, k);
}

}  // namespace

at::Tensor float8GemvForwardCuda(const at::Tensor& x, const at::Tensor& stored, const at::Tensor& scale, const at::Tensor& bias) {
  at::Tensor y = at::empty({x.size(0), stored.size(0)}, x.options());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "float8GemvForward", [&] {
    switch (x.size(0)) {
      case 1: launchForward<scalar_t, 1>(x, stored, scale, bias, y, stream); break;
      case 2: launchForward<scalar_t, 2>(x, stored, scale, bias, y, stream); break;
      case 3: launchForward<scalar_t, 3>(x, stored, scale, bias, y, stream); break;
      default: launchForward<scalar_t, 4>(x, stored, scale, bias, y, stream); break;
    }
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

at::Tensor float8GemvBackwardCuda(const at::Tensor& g, const at::Tensor& stored, const at::Tensor& scale) {
  const int64_t m = g.size(0), n = stored.size(0), k = stored.size(1);
  const int64_t chunks = (n + kRowsPerChunk - 1) / kRowsPerChunk;
  at::Tensor partial = at::empty({chunks, m, k}, g.options().dtype(at::kFloat));
  at::Tensor dx = at::empty({m, k}, g.options());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, g.scalar_type(), "float8GemvBackward", [&] {
    switch (m) {
      case 1: launchBackwardChunks<scalar_t, 1>(g, stored, scale, partial, stream); break;
      case 2: launchBackwardChunks<scalar_t, 2>(g, stored, scale, partial, stream); break;
      case 3: launchBackwardChunks<scalar_t, 3>(g, stored, scale, partial, stream); break;
      default: launchBackwardChunks<scalar_t, 4>(g, stored, scale, partial, stream); break;
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    const int64_t size = m * k;
    sumChunks<scalar_t><<<static_cast<unsigned>((size + 255) / 256), 256, 0, stream>>>(partial.data_ptr<float>(),
                                                                                      static_cast<int>(chunks), size,
                                                                                      dx.data_ptr<scalar_t>());
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return dx;
}

}  // namespace sinter::kernels

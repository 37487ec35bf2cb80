#include <algorithm>
#include <type_traits>

#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "kernels/flux_modulation_cuda.h"
#include "kernels/vector_access.cuh"

namespace sinter::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxVecsPerThread = 4;   // rows of up to 256 * 4 * 4 = 4096 channels (FLUX: 3072)
// The row kernels take the vectors a thread holds (kVecs, 1 to kMaxVecsPerThread: 3 at FLUX's
// width) as a template argument, so no registers are held for vectors a row does not have.
constexpr int kRowsPerTile = 8;  // rows one block walks, summing its channels' weight gradients: few enough that
                                 // a FLUX stream of 512 to 4608 rows fills the GPU (32 left 144 blocks for 132 SMs)

// The block's sums of N values, each in a fixed order (the same bits on every run), given to every
// thread; N sums at once share one round of barriers.
template <int N>
__device__ void blockSums(float (&v)[N], float (&shared)[kThreads / 32][N]) {
#pragma unroll
  for (int n = 0; n < N; ++n) v[n] = warpSum(v[n]);
  if ((threadIdx.x & 31) == 0) {
#pragma unroll
    for (int n = 0; n < N; ++n) shared[threadIdx.x >> 5][n] = v[n];
  }
  __syncthreads();
#pragma unroll
  for (int n = 0; n < N; ++n) {
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < kThreads / 32; ++w) total += shared[w][n];
    v[n] = total;
  }
  __syncthreads();  // shared is written again by the next call
}

__device__ float blockSum(float v, float (&shared)[kThreads / 32][1]) {
  float sums[1] = {v};
  blockSums(sums, shared);
  return sums[0];
}

// This thread's slots: channel vectors threadIdx.x, + kThreads, ... below `vecs`.
__device__ __forceinline__ bool owns(int i, int64_t vecs) { return threadIdx.x + i * kThreads < vecs; }
__device__ __forceinline__ int64_t channelOf(int i) { return (threadIdx.x + static_cast<int64_t>(i) * kThreads) * kVec; }

// This thread's channels of one sample's [1, C] vector (shift, scale or gate) in float32, plus `add`.
template <int kVecs, typename T>
__device__ __forceinline__ void loadChannels(const T* vector, int64_t vecs, float add, float (&out)[kVecs][kVec]) {
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    if (!owns(i, vecs)) continue;
    const Vec<T> s = loadVec(vector + channelOf(i));
#pragma unroll
    for (int e = 0; e < kVec; ++e) out[i][e] = add + static_cast<float>(s.v[e]);
  }
}

// This thread's vectors of one row, as stored (the backward kernel loads the next row's while the
// current one is reduced, so a block has two rows in flight, not one).
template <int kVecs, typename T>
__device__ __forceinline__ void loadRow(const T* row, int64_t vecs, Vec<T> (&out)[kVecs]) {
#pragma unroll
  for (int i = 0; i < kVecs; ++i)
    if (owns(i, vecs)) out[i] = loadVec(row + channelOf(i));
}

// y = (x - mean) * rstd * (1 + scale) + shift per row of C channels, statistics in float32 (two
// passes over the row held in registers), rounded once. Grid: (row tiles, B).
template <typename T, int kVecs>
__global__ void layerNormModulateForward(const T* __restrict__ x, const T* __restrict__ shift, const T* __restrict__ scale,
                                         T* __restrict__ out, float* __restrict__ meanOut, float* __restrict__ rstdOut,
                                         RowsGeometry g, float eps) {
  __shared__ float shared[kThreads / 32][1];
  const int64_t b = blockIdx.y, vecs = g.channels / kVec;
  float onePlusScale[kVecs][kVec], shiftOf[kVecs][kVec];
  loadChannels(scale + b * g.modBatchStride, vecs, 1.0f, onePlusScale);
  loadChannels(shift + b * g.modBatchStride, vecs, 0.0f, shiftOf);
  const float inverseC = 1.0f / static_cast<float>(g.channels);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kRowsPerTile;
  for (int64_t l = first; l < first + kRowsPerTile && l < g.length; ++l) {
    const int64_t row = b * g.length + l;
    const T* xr = x + row * g.channels;
    float v[kVecs][kVec];
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (!owns(i, vecs)) continue;
      const Vec<T> in = loadVec(xr + channelOf(i));
#pragma unroll
      for (int e = 0; e < kVec; ++e) sum += v[i][e] = static_cast<float>(in.v[e]);
    }
    const float mean = blockSum(sum, shared) * inverseC;
    float squares = 0.0f;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (!owns(i, vecs)) continue;
#pragma unroll
      for (int e = 0; e < kVec; ++e) squares += (v[i][e] - mean) * (v[i][e] - mean);
    }
    const float rstd = rsqrtf(blockSum(squares, shared) * inverseC + eps);
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (!owns(i, vecs)) continue;
      float y[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) y[e] = (v[i][e] - mean) * rstd * onePlusScale[i][e] + shiftOf[i][e];
      storeVec(out + row * g.channels + channelOf(i), y);
    }
    if (threadIdx.x == 0) {
      meanOut[row] = mean;
      rstdOut[row] = rstd;
    }
  }
}

// With xhat = (x - mean) * rstd and d xhat = d y * (1 + scale):
//   d x = rstd * (d xhat - mean(d xhat) - xhat * mean(d xhat * xhat)),
//   d scale = sum over rows of d y * xhat, d shift = sum over rows of d y (per tile, into partials
//   [B, tiles, 2, C]; the caller adds the tiles).
template <typename T, int kVecs>
__global__ void layerNormModulateBackward(const T* __restrict__ x, const T* __restrict__ scale, const float* __restrict__ meanIn,
                                          const float* __restrict__ rstdIn, const T* __restrict__ gradOut,
                                          T* __restrict__ gradX, float* __restrict__ partials, RowsGeometry g) {
  __shared__ float shared[kThreads / 32][2];
  const int64_t b = blockIdx.y, vecs = g.channels / kVec;
  float onePlusScale[kVecs][kVec], dScale[kVecs][kVec] = {}, dShift[kVecs][kVec] = {};
  loadChannels(scale + b * g.modBatchStride, vecs, 1.0f, onePlusScale);
  const float inverseC = 1.0f / static_cast<float>(g.channels);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kRowsPerTile;
  const int64_t last = first + kRowsPerTile < g.length ? first + kRowsPerTile : g.length;
  Vec<T> nextX[kVecs], nextGrad[kVecs];
  if (first < last) {
    loadRow(x + (b * g.length + first) * g.channels, vecs, nextX);
    loadRow(gradOut + (b * g.length + first) * g.channels, vecs, nextGrad);
  }
  for (int64_t l = first; l < last; ++l) {
    const int64_t row = b * g.length + l;
    Vec<T> in[kVecs], go[kVecs];
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      in[i] = nextX[i];
      go[i] = nextGrad[i];
    }
    if (l + 1 < last) {
      loadRow(x + (row + 1) * g.channels, vecs, nextX);
      loadRow(gradOut + (row + 1) * g.channels, vecs, nextGrad);
    }
    const float mean = meanIn[row], rstd = rstdIn[row];
    float xhat[kVecs][kVec], dxhat[kVecs][kVec];
    float sumD = 0.0f, sumDX = 0.0f;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (!owns(i, vecs)) continue;
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        const float dy = static_cast<float>(go[i].v[e]);
        xhat[i][e] = (static_cast<float>(in[i].v[e]) - mean) * rstd;
        dxhat[i][e] = dy * onePlusScale[i][e];
        sumD += dxhat[i][e];
        sumDX += dxhat[i][e] * xhat[i][e];
        dScale[i][e] += dy * xhat[i][e];
        dShift[i][e] += dy;
      }
    }
    float sums[2] = {sumD, sumDX};
    blockSums(sums, shared);
    const float meanD = sums[0] * inverseC, meanDX = sums[1] * inverseC;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (!owns(i, vecs)) continue;
      float dx[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) dx[e] = rstd * (dxhat[i][e] - meanD - xhat[i][e] * meanDX);
      storeVec(gradX + row * g.channels + channelOf(i), dx);
    }
  }
  float* p = partials + (b * gridDim.x + blockIdx.x) * 2 * g.channels;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    if (!owns(i, vecs)) continue;
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      p[channelOf(i) + e] = dScale[i][e];
      p[g.channels + channelOf(i) + e] = dShift[i][e];
    }
  }
}

// out = residual + gate * y, in float32, rounded once. Grid: (row tiles, B).
template <typename T, int kVecs>
__global__ void gatedResidualForward(const T* __restrict__ residual, const T* __restrict__ gate, const T* __restrict__ y,
                                     T* __restrict__ out, RowsGeometry g) {
  const int64_t b = blockIdx.y, vecs = g.channels / kVec;
  float gateOf[kVecs][kVec];
  loadChannels(gate + b * g.modBatchStride, vecs, 0.0f, gateOf);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kRowsPerTile;
  for (int64_t l = first; l < first + kRowsPerTile && l < g.length; ++l) {
    const int64_t at = (b * g.length + l) * g.channels;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (!owns(i, vecs)) continue;
      const Vec<T> r = loadVec(residual + at + channelOf(i)), v = loadVec(y + at + channelOf(i));
      float o[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) o[e] = static_cast<float>(r.v[e]) + gateOf[i][e] * static_cast<float>(v.v[e]);
      storeVec(out + at + channelOf(i), o);
    }
  }
}

// d y = d out * gate; d gate = sum over rows of d out * y (per tile, into partials [B, tiles, C]).
template <typename T, int kVecs>
__global__ void gatedResidualBackward(const T* __restrict__ gate, const T* __restrict__ y, const T* __restrict__ gradOut,
                                      T* __restrict__ gradY, float* __restrict__ partials, RowsGeometry g) {
  const int64_t b = blockIdx.y, vecs = g.channels / kVec;
  float gateOf[kVecs][kVec], dGate[kVecs][kVec] = {};
  loadChannels(gate + b * g.modBatchStride, vecs, 0.0f, gateOf);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kRowsPerTile;
  for (int64_t l = first; l < first + kRowsPerTile && l < g.length; ++l) {
    const int64_t at = (b * g.length + l) * g.channels;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (!owns(i, vecs)) continue;
      const Vec<T> go = loadVec(gradOut + at + channelOf(i)), v = loadVec(y + at + channelOf(i));
      float dy[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        const float d = static_cast<float>(go.v[e]);
        dy[e] = d * gateOf[i][e];
        dGate[i][e] += d * static_cast<float>(v.v[e]);
      }
      storeVec(gradY + at + channelOf(i), dy);
    }
  }
  float* p = partials + (b * gridDim.x + blockIdx.x) * g.channels;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    if (!owns(i, vecs)) continue;
#pragma unroll
    for (int e = 0; e < kVec; ++e) p[channelOf(i) + e] = dGate[i][e];
  }
}

// PyTorch's gelu(approximate="tanh"): 0.5 x (1 + tanh(beta (x + kappa x^3))).
constexpr float kBeta = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kKappa = 0.044715f;

__device__ __forceinline__ float geluTanhOf(float x) {
  return 0.5f * x * (1.0f + tanhf(kBeta * (x + kKappa * x * x * x)));
}

__device__ __forceinline__ float geluTanhDerivative(float x) {
  const float t = tanhf(kBeta * (x + kKappa * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kBeta * (1.0f + 3.0f * kKappa * x * x);
}

// What a rows kernel does to each element: copies it, or gelu(approximate="tanh") forward or backward.
enum class RowOp { kCopy, kGelu, kGeluBackward };

// Rows a thread of mapRows takes at once: its loads of them are in flight together (one row at a
// time left the kernels at half the card's bandwidth).
constexpr int kRowsAtOnce = 4;

// Rows of `cols` elements, each row at its own stride (a column range of a wider tensor), one
// vector of kVec per thread and row: out[row] = in[row], gelu(in[row]), or d out[row] * gelu'(in[row]).
// Blocks walk columns in x and groups of kRowsAtOnce rows in y, so no thread divides to find its row.
template <typename T, RowOp kOp>
__global__ void mapRows(const T* __restrict__ in, int64_t inRowStride, const T* __restrict__ gradOut, int64_t gradRowStride,
                        T* __restrict__ out, int64_t outRowStride, int64_t rows, int64_t cols) {
  const int64_t col = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kVec;
  if (col >= cols) return;
  for (int64_t first = static_cast<int64_t>(blockIdx.y) * kRowsAtOnce; first < rows; first += static_cast<int64_t>(gridDim.y) * kRowsAtOnce) {
    Vec<T> x[kRowsAtOnce], go[kRowsAtOnce];
#pragma unroll
    for (int r = 0; r < kRowsAtOnce; ++r) {
      if (first + r >= rows) continue;
      x[r] = loadVec(in + (first + r) * inRowStride + col);
      if constexpr (kOp == RowOp::kGeluBackward) go[r] = loadVec(gradOut + (first + r) * gradRowStride + col);
    }
#pragma unroll
    for (int r = 0; r < kRowsAtOnce; ++r) {
      if (first + r >= rows) continue;
      T* o = out + (first + r) * outRowStride + col;
      if constexpr (kOp == RowOp::kCopy) {
        *reinterpret_cast<Vec<T>*>(o) = x[r];
        continue;
      }
      float y[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e)
        y[e] = kOp == RowOp::kGeluBackward ? static_cast<float>(go[r].v[e]) * geluTanhDerivative(static_cast<float>(x[r].v[e]))
                                          : geluTanhOf(static_cast<float>(x[r].v[e]));
      storeVec(o, y);
    }
  }
}

int64_t rowStride(const at::Tensor& t) { return t.dim() >= 2 ? t.stride(-2) : t.size(-1); }

template <RowOp kOp>
void mapRowsCuda(const at::Tensor& in, const at::Tensor& gradOut, at::Tensor& out) {
  const int64_t cols = in.size(-1), rows = in.numel() / std::max<int64_t>(cols, 1);
  if (rows * cols == 0) return;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int64_t rowGroups = (rows + kRowsAtOnce - 1) / kRowsAtOnce;
  const int64_t columnBlocks = (cols / kVec + kThreads - 1) / kThreads, rowBlocks = rowGroups < 65535 ? rowGroups : 65535;
  const dim3 grid(static_cast<unsigned int>(columnBlocks), static_cast<unsigned int>(rowBlocks));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, in.scalar_type(), "sinter_map_rows", [&] {
    mapRows<scalar_t, kOp><<<grid, kThreads, 0, stream>>>(in.data_ptr<scalar_t>(), rowStride(in),
                                                         gradOut.defined() ? gradOut.data_ptr<scalar_t>() : nullptr,
                                                         gradOut.defined() ? rowStride(gradOut) : 0, out.data_ptr<scalar_t>(),
                                                         rowStride(out), rows, cols);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Calls f(std::integral_constant<int, n>{}), n the vectors a thread of the row kernels holds for
// rows of `channels` (rowsKernelsFit() bounds it by kMaxVecsPerThread).
template <typename F>
void withVecs(int64_t channels, F&& f) {
  const int64_t vecs = (channels / kVec + kThreads - 1) / kThreads;
  if (vecs <= 1) f(std::integral_constant<int, 1>{});
  else if (vecs == 2) f(std::integral_constant<int, 2>{});
  else if (vecs == 3) f(std::integral_constant<int, 3>{});
  else f(std::integral_constant<int, kMaxVecsPerThread>{});
}

dim3 tilesOf(const RowsGeometry& g) {
  return dim3(static_cast<unsigned int>((g.length + kRowsPerTile - 1) / kRowsPerTile), static_cast<unsigned int>(g.batch));
}

}  // namespace

bool rowsKernelsFit(int64_t channels) { return channels % kVec == 0 && channels <= int64_t{kThreads} * kVec * kMaxVecsPerThread; }

std::vector<at::Tensor> layerNormModulateForwardCuda(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale,
                                                     const RowsGeometry& g, double eps) {
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  at::Tensor mean = at::empty({g.batch, g.length}, x.options().dtype(at::kFloat)), rstd = at::empty_like(mean);
  if (g.batch * g.length == 0) return {out, mean, rstd};
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "sinter_layer_norm_modulate_forward", [&] {
    withVecs(g.channels, [&](auto vecs) {
      layerNormModulateForward<scalar_t, decltype(vecs)::value><<<tilesOf(g), kThreads, 0, stream>>>(
          x.data_ptr<scalar_t>(), shift.data_ptr<scalar_t>(), scale.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(),
          mean.data_ptr<float>(), rstd.data_ptr<float>(), g, static_cast<float>(eps));
    });
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {out, mean, rstd};
}

std::vector<at::Tensor> layerNormModulateBackwardCuda(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& mean,
                                                      const at::Tensor& rstd, const at::Tensor& gradOut, const RowsGeometry& g) {
  at::Tensor gradX = at::empty_like(x, at::MemoryFormat::Contiguous);
  const dim3 grid = tilesOf(g);
  at::Tensor partials = at::empty({g.batch, static_cast<int64_t>(grid.x), 2, g.channels}, x.options().dtype(at::kFloat));
  if (g.batch * g.length == 0) return {gradX, partials.zero_().sum(1)};
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "sinter_layer_norm_modulate_backward", [&] {
    withVecs(g.channels, [&](auto vecs) {
      layerNormModulateBackward<scalar_t, decltype(vecs)::value><<<grid, kThreads, 0, stream>>>(
          x.data_ptr<scalar_t>(), scale.data_ptr<scalar_t>(), mean.data_ptr<float>(), rstd.data_ptr<float>(),
          gradOut.data_ptr<scalar_t>(), gradX.data_ptr<scalar_t>(), partials.data_ptr<float>(), g);
    });
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {gradX, partials.sum(1)};  // [B, 2, C]: d scale, d shift
}

at::Tensor gatedResidualForwardCuda(const at::Tensor& residual, const at::Tensor& gate, const at::Tensor& y,
                                    const RowsGeometry& g) {
  at::Tensor out = at::empty_like(residual, at::MemoryFormat::Contiguous);
  if (g.batch * g.length == 0) return out;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, residual.scalar_type(), "sinter_gated_residual_forward", [&] {
    withVecs(g.channels, [&](auto vecs) {
      gatedResidualForward<scalar_t, decltype(vecs)::value><<<tilesOf(g), kThreads, 0, stream>>>(
          residual.data_ptr<scalar_t>(), gate.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), g);
    });
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

std::vector<at::Tensor> gatedResidualBackwardCuda(const at::Tensor& gate, const at::Tensor& y, const at::Tensor& gradOut,
                                                  const RowsGeometry& g) {
  at::Tensor gradY = at::empty_like(y, at::MemoryFormat::Contiguous);
  const dim3 grid = tilesOf(g);
  at::Tensor partials = at::empty({g.batch, static_cast<int64_t>(grid.x), g.channels}, y.options().dtype(at::kFloat));
  if (g.batch * g.length == 0) return {gradY, partials.zero_().sum(1)};
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, y.scalar_type(), "sinter_gated_residual_backward", [&] {
    withVecs(g.channels, [&](auto vecs) {
      gatedResidualBackward<scalar_t, decltype(vecs)::value><<<grid, kThreads, 0, stream>>>(gate.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(),
                                                                    gradOut.data_ptr<scalar_t>(), gradY.data_ptr<scalar_t>(),
                                                                    partials.data_ptr<float>(), g);
    });
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {gradY, partials.sum(1)};  // [B, C]: d gate
}

void geluTanhRowsCuda(const at::Tensor& in, const at::Tensor& gradOut, at::Tensor& out) {
  if (gradOut.defined()) mapRowsCuda<RowOp::kGeluBackward>(in, gradOut, out);
  else mapRowsCuda<RowOp::kGelu>(in, gradOut, out);
}

void copyRowsCuda(const at::Tensor& in, at::Tensor& out) { mapRowsCuda<RowOp::kCopy>(in, at::Tensor(), out); }

}  // namespace sinter::kernels

#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "kernels/group_norm_silu_cuda.h"

namespace sinter::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kChunk = kThreads * 16;  // elements of one group that one block reduces
constexpr int64_t kMaxGridY = 65535;

template <typename A>
__device__ __forceinline__ A warpSum(A v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// The sum of v over the block, valid in thread 0. `shared` holds one A per warp.
template <typename A>
__device__ A blockSum(A v, A* shared) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warpSum(v);
  __syncthreads();  // a previous call's readers are done with shared
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? shared[lane] : A(0);
  if (warp == 0) v = warpSum(v);
  return v;
}

__device__ __forceinline__ float sigmoid(float z) { return 1.0f / (1.0f + expf(-z)); }

// d silu(z) / dz = s * (1 + z * (1 - s)), s = sigmoid(z)
__device__ __forceinline__ float siluDerivative(float z) {
  const float s = sigmoid(z);
  return s * (1.0f + z * (1.0f - s));
}

// The norm's activation: SiLU, or none (the plain GroupNorm), and its derivative.
template <bool kSilu>
__device__ __forceinline__ float activate(float z) {
  return kSilu ? z * sigmoid(z) : z;
}
template <bool kSilu>
__device__ __forceinline__ float activationDerivative(float z) {
  return kSilu ? siluDerivative(z) : 1.0f;
}

// The statistics' index (sample, group) of row (sample, channel).
__device__ __forceinline__ int64_t statOf(int64_t row, int64_t channels, int64_t channelsPerGroup) {
  return (row / channels) * (channels / channelsPerGroup) + (row % channels) / channelsPerGroup;
}

// Chunk blockIdx.x of group blockIdx.y (a contiguous span of `span` elements in [N, C, *]): its mean
// and sum of squared deviations, from sums shifted by the chunk's first element so that a large
// mean does not cancel the variance in float32.
template <typename T>
__global__ void groupStatsPartial(const T* __restrict__ x, int64_t span, float* __restrict__ partialMean,
                                  float* __restrict__ partialM2) {
  __shared__ float shared[32];
  const int64_t begin = blockIdx.x * kChunk, end = begin + kChunk < span ? begin + kChunk : span;
  const T* group = x + blockIdx.y * span;
  const float shift = static_cast<float>(group[begin]);
  float sum = 0.0f, squares = 0.0f;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const float v = static_cast<float>(group[i]) - shift;
    sum += v;
    squares += v * v;
  }
  sum = blockSum(sum, shared);
  squares = blockSum(squares, shared);
  if (threadIdx.x == 0) {
    const float count = static_cast<float>(end - begin);
    const int64_t slot = blockIdx.y * gridDim.x + blockIdx.x;
    partialMean[slot] = shift + sum / count;
    partialM2[slot] = fmaxf(squares - sum * sum / count, 0.0f);
  }
}

// Chan et al.'s pairwise combination of the chunks' statistics (in float64), one thread per group:
// the mean and 1 / sqrt(biased variance + eps), as GroupNorm defines them.
__global__ void groupStatsCombine(const float* __restrict__ partialMean, const float* __restrict__ partialM2, int64_t chunks,
                                  int64_t span, int64_t groupsTotal, double eps, float* __restrict__ mean,
                                  float* __restrict__ rstd) {
  const int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (g >= groupsTotal) return;
  double count = 0.0, m = 0.0, m2 = 0.0;
  for (int64_t s = 0; s < chunks; ++s) {
    const double n = static_cast<double>(span - s * kChunk < kChunk ? span - s * kChunk : kChunk);
    const double delta = partialMean[g * chunks + s] - m;
    const double total = count + n;
    m += delta * n / total;
    m2 += partialM2[g * chunks + s] + delta * delta * count * n / total;
    count = total;
  }
  mean[g] = static_cast<float>(m);
  rstd[g] = static_cast<float>(1.0 / sqrt(m2 / count + eps));
}

// Rows (sample, channel) of `hw` elements along blockIdx.y: z = x * scale + shift with the row's
// scale = rstd * weight and shift = bias - mean * scale; out = z * sigmoid(z) (or z), rounded once.
template <typename T, bool kSilu>
__global__ void groupNormSiluApply(const T* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
                                   const float* __restrict__ mean, const float* __restrict__ rstd, int64_t rows,
                                   int64_t channels, int64_t channelsPerGroup, int64_t hw, T* __restrict__ out) {
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const int64_t c = row % channels, stat = statOf(row, channels, channelsPerGroup);
    const float scale = rstd[stat] * weight[c];
    const float shift = bias[c] - mean[stat] * scale;
    const T* in = x + row * hw;
    T* o = out + row * hw;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < hw;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      const float z = static_cast<float>(in[i]) * scale + shift;
      o[i] = static_cast<T>(activate<kSilu>(z));
    }
  }
}

// One block per row: the sums over the row's positions of dz and dz * xhat.
template <typename T, bool kSilu>
__global__ void groupNormSiluRowSums(const T* __restrict__ gradOut, const T* __restrict__ x, const float* __restrict__ weight,
                                     const float* __restrict__ bias, const float* __restrict__ mean,
                                     const float* __restrict__ rstd, int64_t rows, int64_t channels, int64_t channelsPerGroup,
                                     int64_t hw, float* __restrict__ sumDz, float* __restrict__ sumDzXhat) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t c = row % channels, stat = statOf(row, channels, channelsPerGroup);
    const float m = mean[stat], r = rstd[stat], w = weight[c], b = bias[c];
    float dzSum = 0.0f, dzXhatSum = 0.0f;
    for (int64_t i = threadIdx.x; i < hw; i += blockDim.x) {
      const float xhat = (static_cast<float>(x[row * hw + i]) - m) * r;
      const float dz = static_cast<float>(gradOut[row * hw + i]) * activationDerivative<kSilu>(xhat * w + b);
      dzSum += dz;
      dzXhatSum += dz * xhat;
    }
    dzSum = blockSum(dzSum, shared);
    dzXhatSum = blockSum(dzXhatSum, shared);
    if (threadIdx.x == 0) {
      sumDz[row] = dzSum;
      sumDzXhat[row] = dzXhatSum;
    }
  }
}

// dx = scale * dz + q * x + r, with the row's scale = rstd * weight and the group's q and r
// (groupNormSiluBackwardCuda); dz recomputed from x as in the forward pass.
template <typename T, bool kSilu>
__global__ void groupNormSiluInputGrad(const T* __restrict__ gradOut, const T* __restrict__ x, const float* __restrict__ weight,
                                       const float* __restrict__ bias, const float* __restrict__ mean,
                                       const float* __restrict__ rstd, const float* __restrict__ q,
                                       const float* __restrict__ r, int64_t rows, int64_t channels, int64_t channelsPerGroup,
                                       int64_t hw, T* __restrict__ gradX) {
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const int64_t c = row % channels, stat = statOf(row, channels, channelsPerGroup);
    const float scale = rstd[stat] * weight[c];
    const float shift = bias[c] - mean[stat] * scale;
    const float qs = q[stat], rs = r[stat];
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < hw;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      const float xv = static_cast<float>(x[row * hw + i]);
      const float dz = static_cast<float>(gradOut[row * hw + i]) * activationDerivative<kSilu>(xv * scale + shift);
      gradX[row * hw + i] = static_cast<T>(scale * dz + qs * xv + rs);
    }
  }
}

// NHWC (channels_last [N, C, H, W], in memory [N, HW, C]): a group's channels are contiguous within
// a pixel. The reductions run on tiles of kTileChannels channels by kPixelChunk pixels (a warp reads
// a pixel's adjacent channels), one partial per (sample, chunk, channel), then per group.
constexpr int kTileChannels = 32;
constexpr int kTileRows = kThreads / kTileChannels;  // pixels a tile reads at once
constexpr int64_t kPixelChunk = 256;

__device__ __forceinline__ int64_t chunkPixels(int64_t chunk, int64_t hw) {
  return hw - chunk * kPixelChunk < kPixelChunk ? hw - chunk * kPixelChunk : kPixelChunk;
}

// Tile (chunk blockIdx.x, channels blockIdx.y, sample blockIdx.z): each channel's mean and sum of
// squared deviations over the chunk's pixels, shifted by the channel's value at the first pixel (as
// groupStatsPartial), into [N, chunks, C].
template <typename T>
__global__ void nhwcChannelStatsPartial(const T* __restrict__ x, int64_t hw, int64_t channels, float* __restrict__ partialMean,
                                        float* __restrict__ partialM2) {
  __shared__ float sums[kTileRows][kTileChannels], squares[kTileRows][kTileChannels];
  const int lane = threadIdx.x % kTileChannels, tileRow = threadIdx.x / kTileChannels;
  const int64_t c = blockIdx.y * static_cast<int64_t>(kTileChannels) + lane, n = blockIdx.z;
  const int64_t begin = blockIdx.x * kPixelChunk, count = chunkPixels(blockIdx.x, hw);
  const T* sample = x + n * hw * channels;
  float shift = 0.0f, sum = 0.0f, square = 0.0f;
  if (c < channels) {
    shift = static_cast<float>(sample[begin * channels + c]);
    for (int64_t p = begin + tileRow; p < begin + count; p += kTileRows) {
      const float v = static_cast<float>(sample[p * channels + c]) - shift;
      sum += v;
      square += v * v;
    }
  }
  sums[tileRow][lane] = sum;
  squares[tileRow][lane] = square;
  __syncthreads();
  if (tileRow == 0 && c < channels) {
    for (int k = 1; k < kTileRows; ++k) {
      sum += sums[k][lane];
      square += squares[k][lane];
    }
    const float pixels = static_cast<float>(count);
    const int64_t slot = (blockIdx.z * static_cast<int64_t>(gridDim.x) + blockIdx.x) * channels + c;
    partialMean[slot] = shift + sum / pixels;
    partialM2[slot] = fmaxf(square - sum * sum / pixels, 0.0f);
  }
}

// One block per (sample, group) = blockIdx.x: its chunks' per-channel statistics combined in float64
// by Chan et al.'s formula in its parallel form, mean = sum(n_i * mean_i) / n and
// M2 = sum(M2_i + n_i * (mean_i - mean)^2); the mean and 1 / sqrt(biased variance + eps).
__global__ void nhwcGroupStatsCombine(const float* __restrict__ partialMean, const float* __restrict__ partialM2,
                                      int64_t chunks, int64_t hw, int64_t channels, int64_t channelsPerGroup, double eps,
                                      float* __restrict__ mean, float* __restrict__ rstd) {
  __shared__ double shared[32];
  __shared__ double groupMean;
  const int64_t groups = channels / channelsPerGroup, n = blockIdx.x / groups, g = blockIdx.x % groups;
  const int64_t entries = chunks * channelsPerGroup;
  auto slotOf = [&](int64_t e) { return (n * chunks + e / channelsPerGroup) * channels + g * channelsPerGroup + e % channelsPerGroup; };
  double weighted = 0.0;
  for (int64_t e = threadIdx.x; e < entries; e += blockDim.x)
    weighted += static_cast<double>(chunkPixels(e / channelsPerGroup, hw)) * partialMean[slotOf(e)];
  weighted = blockSum(weighted, shared);
  const double total = static_cast<double>(hw * channelsPerGroup);
  if (threadIdx.x == 0) groupMean = weighted / total;
  __syncthreads();
  const double m = groupMean;
  double m2 = 0.0;
  for (int64_t e = threadIdx.x; e < entries; e += blockDim.x) {
    const int64_t slot = slotOf(e);
    const double delta = partialMean[slot] - m;
    m2 += partialM2[slot] + static_cast<double>(chunkPixels(e / channelsPerGroup, hw)) * delta * delta;
  }
  m2 = blockSum(m2, shared);
  if (threadIdx.x == 0) {
    mean[blockIdx.x] = static_cast<float>(m);
    rstd[blockIdx.x] = static_cast<float>(1.0 / sqrt(m2 / total + eps));
  }
}

// Sample blockIdx.y's [HW, C] elements, grid-strided; a thread's channel advances by the stride
// modulo C (no division per element). out = activate(x * scale + shift), rounded once.
template <typename T, bool kSilu>
__global__ void nhwcGroupNormApply(const T* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
                                   const float* __restrict__ mean, const float* __restrict__ rstd, int64_t hwc,
                                   int64_t channels, int64_t channelsPerGroup, T* __restrict__ out) {
  const int64_t groups = channels / channelsPerGroup, statBase = blockIdx.y * groups, sampleBase = blockIdx.y * hwc;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x, strideChannels = stride % channels;
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x, c = i % channels;
  for (; i < hwc; i += stride) {
    const int64_t stat = statBase + c / channelsPerGroup;
    const float scale = rstd[stat] * weight[c];
    const float shift = bias[c] - mean[stat] * scale;
    out[sampleBase + i] = static_cast<T>(activate<kSilu>(static_cast<float>(x[sampleBase + i]) * scale + shift));
    c += strideChannels;
    if (c >= channels) c -= channels;
  }
}

// Tiles as nhwcChannelStatsPartial: each channel's sums over the chunk's pixels of dz and
// dz * xhat, into [N, chunks, C] (summed over the chunks by the launcher).
template <typename T, bool kSilu>
__global__ void nhwcChannelGradSums(const T* __restrict__ gradOut, const T* __restrict__ x, const float* __restrict__ weight,
                                    const float* __restrict__ bias, const float* __restrict__ mean,
                                    const float* __restrict__ rstd, int64_t hw, int64_t channels, int64_t channelsPerGroup,
                                    float* __restrict__ partialDz, float* __restrict__ partialDzXhat) {
  __shared__ float dzs[kTileRows][kTileChannels], dzXhats[kTileRows][kTileChannels];
  const int lane = threadIdx.x % kTileChannels, tileRow = threadIdx.x / kTileChannels;
  const int64_t c = blockIdx.y * static_cast<int64_t>(kTileChannels) + lane, n = blockIdx.z;
  const int64_t begin = blockIdx.x * kPixelChunk, count = chunkPixels(blockIdx.x, hw);
  float dzSum = 0.0f, dzXhatSum = 0.0f;
  if (c < channels) {
    const int64_t stat = n * (channels / channelsPerGroup) + c / channelsPerGroup;
    const float m = mean[stat], r = rstd[stat], w = weight[c], b = bias[c];
    const int64_t sampleBase = n * hw * channels;
    for (int64_t p = begin + tileRow; p < begin + count; p += kTileRows) {
      const int64_t at = sampleBase + p * channels + c;
      const float xhat = (static_cast<float>(x[at]) - m) * r;
      const float dz = static_cast<float>(gradOut[at]) * activationDerivative<kSilu>(xhat * w + b);
      dzSum += dz;
      dzXhatSum += dz * xhat;
    }
  }
  dzs[tileRow][lane] = dzSum;
  dzXhats[tileRow][lane] = dzXhatSum;
  __syncthreads();
  if (tileRow == 0 && c < channels) {
    for (int k = 1; k < kTileRows; ++k) {
      dzSum += dzs[k][lane];
      dzXhatSum += dzXhats[k][lane];
    }
    const int64_t slot = (blockIdx.z * static_cast<int64_t>(gridDim.x) + blockIdx.x) * channels + c;
    partialDz[slot] = dzSum;
    partialDzXhat[slot] = dzXhatSum;
  }
}

// dx = scale * dz + q * x + r, as groupNormSiluInputGrad, over sample blockIdx.y's [HW, C] elements.
template <typename T, bool kSilu>
__global__ void nhwcGroupNormInputGrad(const T* __restrict__ gradOut, const T* __restrict__ x, const float* __restrict__ weight,
                                       const float* __restrict__ bias, const float* __restrict__ mean,
                                       const float* __restrict__ rstd, const float* __restrict__ q,
                                       const float* __restrict__ r, int64_t hwc, int64_t channels, int64_t channelsPerGroup,
                                       T* __restrict__ gradX) {
  const int64_t groups = channels / channelsPerGroup, statBase = blockIdx.y * groups, sampleBase = blockIdx.y * hwc;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x, strideChannels = stride % channels;
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x, c = i % channels;
  for (; i < hwc; i += stride) {
    const int64_t stat = statBase + c / channelsPerGroup;
    const float scale = rstd[stat] * weight[c];
    const float shift = bias[c] - mean[stat] * scale;
    const float xv = static_cast<float>(x[sampleBase + i]);
    const float dz = static_cast<float>(gradOut[sampleBase + i]) * activationDerivative<kSilu>(xv * scale + shift);
    gradX[sampleBase + i] = static_cast<T>(scale * dz + q[stat] * xv + r[stat]);
    c += strideChannels;
    if (c >= channels) c -= channels;
  }
}

struct Shape {
  int64_t samples, channels, hw, channelsPerGroup;
  bool channelsLast;  // [N, HW, C] in memory, else [N, C, HW]
  int64_t rows() const { return samples * channels; }
  int64_t groups() const { return channels / channelsPerGroup; }
  int64_t chunks() const { return (hw + kPixelChunk - 1) / kPixelChunk; }  // NHWC reductions' pixel chunks
};

Shape shapeOf(const at::Tensor& x, int64_t groups) {
  TORCH_CHECK(x.dim() >= 2 && x.size(1) % groups == 0, "fused GroupNorm+SiLU: ", x.size(1), " channels in ", groups, " groups");
  const bool channelsLast = !x.is_contiguous();
  TORCH_CHECK(!channelsLast || (x.dim() == 4 && x.is_contiguous(at::MemoryFormat::ChannelsLast)),
              "fused GroupNorm+SiLU: the input must be contiguous or channels_last, not strided ", x.strides());
  const int64_t samples = x.size(0), channels = x.size(1);
  const int64_t hw = samples * channels == 0 ? 0 : x.numel() / (samples * channels);
  if (channelsLast)
    TORCH_CHECK(samples <= kMaxGridY && (channels + kTileChannels - 1) / kTileChannels <= kMaxGridY,
                "fused GroupNorm+SiLU: a channels_last input of ", samples, " samples and ", channels, " channels is too large");
  return {samples, channels, hw, channels / groups, channelsLast};
}

// A row-wise elementwise launch: about four elements per thread along a row.
dim3 rowGrid(const Shape& s) {
  const int64_t perRow = std::max<int64_t>(1, std::min<int64_t>((s.hw + 4 * kThreads - 1) / (4 * kThreads), 1024));
  return dim3(static_cast<unsigned int>(perRow), static_cast<unsigned int>(std::min(s.rows(), kMaxGridY)));
}

// NHWC's elementwise launch: about four elements per thread of a sample's HW * C, one grid row a sample.
dim3 sampleGrid(const Shape& s) {
  const int64_t perSample =
      std::max<int64_t>(1, std::min<int64_t>((s.hw * s.channels + 4 * kThreads - 1) / (4 * kThreads), int64_t{1} << 20));
  return dim3(static_cast<unsigned int>(perSample), static_cast<unsigned int>(s.samples));
}

// NHWC's reduction launch: one block per (pixel chunk, channel tile, sample).
dim3 tileGrid(const Shape& s) {
  return dim3(static_cast<unsigned int>(s.chunks()), static_cast<unsigned int>((s.channels + kTileChannels - 1) / kTileChannels),
              static_cast<unsigned int>(s.samples));
}

at::Tensor emptyLike(const at::Tensor& x, const Shape& s) {
  return at::empty_like(x, s.channelsLast ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous);
}

template <typename T, bool kSilu>
void launchForward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const Shape& s, double eps,
                   at::Tensor& out, at::Tensor& mean, at::Tensor& rstd) {
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const at::TensorOptions f32 = x.options().dtype(at::kFloat).memory_format(at::MemoryFormat::Contiguous);
  const int64_t groupsTotal = s.samples * s.groups();
  if (s.channelsLast) {
    at::Tensor partialMean = at::empty({s.samples, s.chunks(), s.channels}, f32), partialM2 = at::empty_like(partialMean);
    nhwcChannelStatsPartial<T><<<tileGrid(s), kThreads, 0, stream>>>(x.data_ptr<T>(), s.hw, s.channels,
                                                                       partialMean.data_ptr<float>(), partialM2.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    nhwcGroupStatsCombine<<<static_cast<unsigned int>(groupsTotal), kThreads, 0, stream>>>(
        partialMean.data_ptr<float>(), partialM2.data_ptr<float>(), s.chunks(), s.hw, s.channels, s.channelsPerGroup, eps,
        mean.data_ptr<float>(), rstd.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    nhwcGroupNormApply<T, kSilu><<<sampleGrid(s), kThreads, 0, stream>>>(
        x.data_ptr<T>(), weight.data_ptr<float>(), bias.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(),
        s.hw * s.channels, s.channels, s.channelsPerGroup, out.data_ptr<T>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  const int64_t span = s.channelsPerGroup * s.hw, chunks = (span + kChunk - 1) / kChunk;
  TORCH_CHECK(groupsTotal <= kMaxGridY, "fused GroupNorm+SiLU: ", groupsTotal, " (sample, group) pairs, at most ", kMaxGridY);
  at::Tensor partialMean = at::empty({groupsTotal, chunks}, f32), partialM2 = at::empty({groupsTotal, chunks}, f32);
  groupStatsPartial<T><<<dim3(static_cast<unsigned int>(chunks), static_cast<unsigned int>(groupsTotal)), kThreads, 0, stream>>>(
      x.data_ptr<T>(), span, partialMean.data_ptr<float>(), partialM2.data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  groupStatsCombine<<<static_cast<unsigned int>((groupsTotal + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      partialMean.data_ptr<float>(), partialM2.data_ptr<float>(), chunks, span, groupsTotal, eps, mean.data_ptr<float>(),
      rstd.data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  groupNormSiluApply<T, kSilu><<<rowGrid(s), kThreads, 0, stream>>>(
      x.data_ptr<T>(), weight.data_ptr<float>(), bias.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(),
      s.rows(), s.channels, s.channelsPerGroup, s.hw, out.data_ptr<T>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// The per-(sample, channel) sums of dz and dz * xhat, float32 [N, C].
template <typename T, bool kSilu>
void launchGradSums(const at::Tensor& gradOutput, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                    const at::Tensor& mean, const at::Tensor& rstd, const Shape& s, at::Tensor& sumDz, at::Tensor& sumDzXhat) {
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (s.channelsLast) {
    const at::TensorOptions f32 = x.options().dtype(at::kFloat).memory_format(at::MemoryFormat::Contiguous);
    at::Tensor partialDz = at::empty({s.samples, s.chunks(), s.channels}, f32), partialDzXhat = at::empty_like(partialDz);
    nhwcChannelGradSums<T, kSilu><<<tileGrid(s), kThreads, 0, stream>>>(
        gradOutput.data_ptr<T>(), x.data_ptr<T>(), weight.data_ptr<float>(), bias.data_ptr<float>(), mean.data_ptr<float>(),
        rstd.data_ptr<float>(), s.hw, s.channels, s.channelsPerGroup, partialDz.data_ptr<float>(),
        partialDzXhat.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    sumDz = partialDz.sum(1);
    sumDzXhat = partialDzXhat.sum(1);
    return;
  }
  groupNormSiluRowSums<T, kSilu><<<static_cast<unsigned int>(std::min<int64_t>(s.rows(), int64_t{1} << 30)), kThreads, 0,
                                   stream>>>(gradOutput.data_ptr<T>(), x.data_ptr<T>(), weight.data_ptr<float>(),
                                             bias.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(), s.rows(),
                                             s.channels, s.channelsPerGroup, s.hw, sumDz.data_ptr<float>(),
                                             sumDzXhat.data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename T, bool kSilu>
void launchInputGrad(const at::Tensor& gradOutput, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                     const at::Tensor& mean, const at::Tensor& rstd, const at::Tensor& q, const at::Tensor& r, const Shape& s,
                     at::Tensor& gradX) {
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (s.channelsLast) {
    nhwcGroupNormInputGrad<T, kSilu><<<sampleGrid(s), kThreads, 0, stream>>>(
        gradOutput.data_ptr<T>(), x.data_ptr<T>(), weight.data_ptr<float>(), bias.data_ptr<float>(), mean.data_ptr<float>(),
        rstd.data_ptr<float>(), q.data_ptr<float>(), r.data_ptr<float>(), s.hw * s.channels, s.channels, s.channelsPerGroup,
        gradX.data_ptr<T>());
  } else {
    groupNormSiluInputGrad<T, kSilu><<<rowGrid(s), kThreads, 0, stream>>>(
        gradOutput.data_ptr<T>(), x.data_ptr<T>(), weight.data_ptr<float>(), bias.data_ptr<float>(), mean.data_ptr<float>(),
        rstd.data_ptr<float>(), q.data_ptr<float>(), r.data_ptr<float>(), s.rows(), s.channels, s.channelsPerGroup, s.hw,
        gradX.data_ptr<T>());
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> groupNormSiluForwardCuda(const at::Tensor& x, const at::Tensor& weight,
                                                                        const at::Tensor& bias, int64_t groups, double eps,
                                                                        bool silu) {
  const Shape s = shapeOf(x, groups);
  const at::TensorOptions f32 = x.options().dtype(at::kFloat).memory_format(at::MemoryFormat::Contiguous);
  at::Tensor out = emptyLike(x, s), mean = at::zeros({s.samples, groups}, f32), rstd = at::zeros({s.samples, groups}, f32);
  if (x.numel() == 0) return {out, mean, rstd};
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "sinter_group_norm_silu_forward", [&] {
    if (silu) launchForward<scalar_t, true>(x, weight, bias, s, eps, out, mean, rstd);
    else launchForward<scalar_t, false>(x, weight, bias, s, eps, out, mean, rstd);
  });
  return {out, mean, rstd};
}

// GroupNorm's input gradient, with A = sum over the group of weight * dz and B = the same of
// weight * dz * xhat, M the group's element count:
//   dx = rstd * (weight * dz - A / M - xhat * B / M) = scale * dz + q * x + r,
//   q = -rstd^2 * B / M,  r = -rstd * A / M - q * mean.
std::tuple<at::Tensor, at::Tensor, at::Tensor> groupNormSiluBackwardCuda(const at::Tensor& gradOutput, const at::Tensor& x,
                                                                         const at::Tensor& weight, const at::Tensor& bias,
                                                                         const at::Tensor& mean, const at::Tensor& rstd,
                                                                         int64_t groups, bool silu) {
  const Shape s = shapeOf(x, groups);
  TORCH_CHECK(gradOutput.sizes() == x.sizes() &&
                  gradOutput.is_contiguous(s.channelsLast ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous),
              "fused GroupNorm+SiLU: the output gradient's layout ", gradOutput.strides(), " is not the input's ", x.strides());
  const at::TensorOptions f32 = x.options().dtype(at::kFloat).memory_format(at::MemoryFormat::Contiguous);
  at::Tensor gradX = emptyLike(x, s), sumDz = at::zeros({s.samples, s.channels}, f32),
             sumDzXhat = at::zeros({s.samples, s.channels}, f32);
  if (x.numel() == 0) return {gradX.zero_(), sumDz, sumDzXhat};
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "sinter_group_norm_silu_row_sums", [&] {
    if (silu) launchGradSums<scalar_t, true>(gradOutput, x, weight, bias, mean, rstd, s, sumDz, sumDzXhat);
    else launchGradSums<scalar_t, false>(gradOutput, x, weight, bias, mean, rstd, s, sumDz, sumDzXhat);
  });
  const double invCount = 1.0 / static_cast<double>(s.channelsPerGroup * s.hw);
  const at::Tensor w = weight.view({1, groups, s.channelsPerGroup});
  const at::Tensor a = (sumDz.view({s.samples, groups, s.channelsPerGroup}) * w).sum(-1);
  const at::Tensor b = (sumDzXhat.view({s.samples, groups, s.channelsPerGroup}) * w).sum(-1);
  const at::Tensor q = (-rstd * rstd * b * invCount).contiguous();
  const at::Tensor r = (-rstd * a * invCount - q * mean).contiguous();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "sinter_group_norm_silu_input_grad", [&] {
    if (silu) launchInputGrad<scalar_t, true>(gradOutput, x, weight, bias, mean, rstd, q, r, s, gradX);
    else launchInputGrad<scalar_t, false>(gradOutput, x, weight, bias, mean, rstd, q, r, s, gradX);
  });
  return {gradX, sumDz, sumDzXhat};
}

}  // namespace sinter::kernels

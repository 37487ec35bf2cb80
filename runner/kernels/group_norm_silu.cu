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

__device__ __forceinline__ float warpSum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// The sum of v over the block, valid in thread 0. `shared` holds one float per warp.
__device__ float blockSum(float v, float* shared) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warpSum(v);
  __syncthreads();  // a previous call's readers are done with shared
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? shared[lane] : 0.0f;
  if (warp == 0) v = warpSum(v);
  return v;
}

__device__ __forceinline__ float sigmoid(float z) { return 1.0f / (1.0f + expf(-z)); }

// d silu(z) / dz = s * (1 + z * (1 - s)), s = sigmoid(z)
__device__ __forceinline__ float siluDerivative(float z) {
  const float s = sigmoid(z);
  return s * (1.0f + z * (1.0f - s));
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
// scale = rstd * weight and shift = bias - mean * scale; out = z * sigmoid(z), rounded once.
template <typename T>
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
      o[i] = static_cast<T>(z * sigmoid(z));
    }
  }
}

// One block per row: the sums over the row's positions of dz and dz * xhat.
template <typename T>
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
      const float dz = static_cast<float>(gradOut[row * hw + i]) * siluDerivative(xhat * w + b);
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
template <typename T>
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
      const float dz = static_cast<float>(gradOut[row * hw + i]) * siluDerivative(xv * scale + shift);
      gradX[row * hw + i] = static_cast<T>(scale * dz + qs * xv + rs);
    }
  }
}

struct Shape {
  int64_t samples, channels, hw, channelsPerGroup;
  int64_t rows() const { return samples * channels; }
};

Shape shapeOf(const at::Tensor& x, int64_t groups) {
  TORCH_CHECK(x.dim() >= 2 && x.size(1) % groups == 0, "fused GroupNorm+SiLU: ", x.size(1), " channels in ", groups, " groups");
  const int64_t samples = x.size(0), channels = x.size(1);
  const int64_t hw = samples * channels == 0 ? 0 : x.numel() / (samples * channels);
  return {samples, channels, hw, channels / groups};
}

// A row-wise elementwise launch: about four elements per thread along a row.
dim3 rowGrid(const Shape& s) {
  const int64_t perRow = std::max<int64_t>(1, std::min<int64_t>((s.hw + 4 * kThreads - 1) / (4 * kThreads), 1024));
  return dim3(static_cast<unsigned int>(perRow), static_cast<unsigned int>(std::min(s.rows(), kMaxGridY)));
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> groupNormSiluForwardCuda(const at::Tensor& x, const at::Tensor& weight,
                                                                        const at::Tensor& bias, int64_t groups, double eps) {
  const Shape s = shapeOf(x, groups);
  const at::TensorOptions f32 = x.options().dtype(at::kFloat);
  at::Tensor out = at::empty_like(x), mean = at::zeros({s.samples, groups}, f32), rstd = at::zeros({s.samples, groups}, f32);
  if (x.numel() == 0) return {out, mean, rstd};
  const int64_t span = s.channelsPerGroup * s.hw, chunks = (span + kChunk - 1) / kChunk, groupsTotal = s.samples * groups;
  TORCH_CHECK(groupsTotal <= kMaxGridY, "fused GroupNorm+SiLU: ", groupsTotal, " (sample, group) pairs, at most ", kMaxGridY);
  at::Tensor partialMean = at::empty({groupsTotal, chunks}, f32), partialM2 = at::empty({groupsTotal, chunks}, f32);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "sinter_group_norm_silu_forward", [&] {
    groupStatsPartial<scalar_t><<<dim3(static_cast<unsigned int>(chunks), static_cast<unsigned int>(groupsTotal)), kThreads, 0,
                                  stream>>>(x.data_ptr<scalar_t>(), span, partialMean.data_ptr<float>(),
                                            partialM2.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    groupStatsCombine<<<static_cast<unsigned int>((groupsTotal + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        partialMean.data_ptr<float>(), partialM2.data_ptr<float>(), chunks, span, groupsTotal, eps, mean.data_ptr<float>(),
        rstd.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    groupNormSiluApply<scalar_t><<<rowGrid(s), kThreads, 0, stream>>>(
        x.data_ptr<scalar_t>(), weight.data_ptr<float>(), bias.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(),
        s.rows(), s.channels, s.channelsPerGroup, s.hw, out.data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
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
                                                                         int64_t groups) {
  const Shape s = shapeOf(x, groups);
  const at::TensorOptions f32 = x.options().dtype(at::kFloat);
  at::Tensor gradX = at::empty_like(x), sumDz = at::zeros({s.samples, s.channels}, f32),
             sumDzXhat = at::zeros({s.samples, s.channels}, f32);
  if (x.numel() == 0) return {gradX.zero_(), sumDz, sumDzXhat};
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "sinter_group_norm_silu_row_sums", [&] {
    groupNormSiluRowSums<scalar_t><<<static_cast<unsigned int>(std::min<int64_t>(s.rows(), int64_t{1} << 30)), kThreads, 0,
                                     stream>>>(gradOutput.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), weight.data_ptr<float>(),
                                               bias.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(), s.rows(),
                                               s.channels, s.channelsPerGroup, s.hw, sumDz.data_ptr<float>(),
                                               sumDzXhat.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  const double invCount = 1.0 / static_cast<double>(s.channelsPerGroup * s.hw);
  const at::Tensor w = weight.view({1, groups, s.channelsPerGroup});
  const at::Tensor a = (sumDz.view({s.samples, groups, s.channelsPerGroup}) * w).sum(-1);
  const at::Tensor b = (sumDzXhat.view({s.samples, groups, s.channelsPerGroup}) * w).sum(-1);
  const at::Tensor q = (-rstd * rstd * b * invCount).contiguous();
  const at::Tensor r = (-rstd * a * invCount - q * mean).contiguous();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "sinter_group_norm_silu_input_grad", [&] {
    groupNormSiluInputGrad<scalar_t><<<rowGrid(s), kThreads, 0, stream>>>(
        gradOutput.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
        mean.data_ptr<float>(), rstd.data_ptr<float>(), q.data_ptr<float>(), r.data_ptr<float>(), s.rows(), s.channels,
        s.channelsPerGroup, s.hw, gradX.data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return {gradX, sumDz, sumDzXhat};
}

}  // namespace sinter::kernels

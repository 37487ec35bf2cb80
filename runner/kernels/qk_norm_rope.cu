#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "kernels/qk_norm_rope_cuda.h"
#include "kernels/vector_access.cuh"

namespace sinter::kernels {

namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kMaxVecsPerLane = 2;  // a warp's row: 32 lanes x 2 x 4 channels, heads of up to 256
// The kernels take the vectors a lane holds (kVecs: 1 for heads of up to 128 channels, FLUX's; 2 up
// to 256) as a template argument: registers for an unused second vector cost occupancy.

// One stream's geometry: qkv [B, L, 3HD] (strides of b and l given, the rest packed), the
// rotations' strides of b (0 when shared) and l.
struct TokenGeometry {
  int64_t length, heads, dim;
  int64_t qkvBatchStride, qkvRowStride;
  int64_t rotBatchStride, rotRowStride;
};

// A [B, H, L, D] tensor's strides of b, h and l (D contiguous): q, k and v (written token-major,
// so the attention's output comes back token-major too), their gradients, and a stream's rows of
// the joint sequence's.
struct HeadMajor {
  int64_t batch, head, row;
};

__device__ __forceinline__ int64_t headMajorOffset(const HeadMajor& s, int64_t b, int64_t h, int64_t l) {
  return b * s.batch + h * s.head + l * s.row;
}

// This lane's channels: vector i covers channels c .. c + 3, c = 4 (lane + 32 i), where c < D.
__device__ __forceinline__ int64_t channelOf(int i) { return static_cast<int64_t>((threadIdx.x & 31) + 32 * i) * kVec; }

// What every head of a token shares, for this lane's channels: the rotation matrices of its
// channel pairs (each [[r00, r01], [r10, r11]] a float4) and the q and k scales. Loaded once per
// token, not once per row.
template <int kVecs>
struct LaneConstants {
  float4 rot[kVecs][2];
  float4 scale[2][kVecs];  // [0]: q's, [1]: k's
};

template <int kVecs>
__device__ __forceinline__ void loadLaneConstants(const float* rot, const float* qScale, const float* kScale, int64_t dim,
                                                  LaneConstants<kVecs>& lc) {
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int64_t c = channelOf(i);
    if (c >= dim) continue;
    lc.rot[i][0] = *reinterpret_cast<const float4*>(rot + 2 * c);
    lc.rot[i][1] = *reinterpret_cast<const float4*>(rot + 2 * c + 4);
    lc.scale[0][i] = *reinterpret_cast<const float4*>(qScale + c);
    lc.scale[1][i] = *reinterpret_cast<const float4*>(kScale + c);
  }
}

// out = R n for the vector's two channel pairs; or R^T n (kTranspose: the backward pass's d n = R^T d out).
template <bool kTranspose>
__device__ __forceinline__ void rotatePairs(const float4 (&m)[2], const float (&n)[kVec], float (&out)[kVec]) {
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    const float r01 = kTranspose ? m[p].z : m[p].y, r10 = kTranspose ? m[p].y : m[p].z;
    out[2 * p] = m[p].x * n[2 * p] + r01 * n[2 * p + 1];
    out[2 * p + 1] = r10 * n[2 * p] + m[p].w * n[2 * p + 1];
  }
}

// One block per token (grid: L, B), one warp per head: the warp reads the head's q, k and v rows
// together (three loads in flight), copies v, and for q and k takes the mean of squares, then
// out = R (x * rrms * s), rounded once. 1 / rms is kept per q and k row, [2, B, L, H].
template <typename T, int kVecs>
__global__ void qkNormRopeForward(const T* __restrict__ qkv, const float* __restrict__ qScale, const float* __restrict__ kScale,
                                  const float* __restrict__ rotations, T* __restrict__ q, T* __restrict__ k, T* __restrict__ v,
                                  HeadMajor qOut, HeadMajor kOut, HeadMajor vOut, float* __restrict__ rrmsOut, TokenGeometry g,
                                  float eps) {
  const int64_t l = blockIdx.x, b = blockIdx.y;
  const T* token = qkv + b * g.qkvBatchStride + l * g.qkvRowStride;
  LaneConstants<kVecs> lc;
  loadLaneConstants(rotations + b * g.rotBatchStride + l * g.rotRowStride, qScale, kScale, g.dim, lc);
  for (int64_t h = threadIdx.x >> 5; h < g.heads; h += kWarpsPerBlock) {
    float xs[3][kVecs][kVec];
#pragma unroll
    for (int part = 0; part < 3; ++part)
#pragma unroll
      for (int i = 0; i < kVecs; ++i)
        if (channelOf(i) < g.dim) loadFloats(token + (part * g.heads + h) * g.dim + channelOf(i), xs[part][i]);
    T* vRow = v + headMajorOffset(vOut, b, h, l);
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
      if (channelOf(i) < g.dim) storeVec(vRow + channelOf(i), xs[2][i]);
#pragma unroll
    for (int part = 0; part < 2; ++part) {
      float squares = 0.0f;
#pragma unroll
      for (int i = 0; i < kVecs; ++i)
        if (channelOf(i) < g.dim)
#pragma unroll
          for (int e = 0; e < kVec; ++e) squares += xs[part][i][e] * xs[part][i][e];
      const float rrms = rsqrtf(warpSum(squares) / static_cast<float>(g.dim) + eps);
      T* row = part == 0 ? q + headMajorOffset(qOut, b, h, l) : k + headMajorOffset(kOut, b, h, l);
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        if (channelOf(i) >= g.dim) continue;
        const float4 s = lc.scale[part][i];
        const float n[kVec] = {xs[part][i][0] * rrms * s.x, xs[part][i][1] * rrms * s.y, xs[part][i][2] * rrms * s.z,
                               xs[part][i][3] * rrms * s.w};
        float y[kVec];
        rotatePairs<false>(lc.rot[i], n, y);
        storeVec(row + channelOf(i), y);
      }
      if ((threadIdx.x & 31) == 0) rrmsOut[((part * gridDim.y + b) * g.length + l) * g.heads + h] = rrms;
    }
  }
}

// q and k: the transpose rotation gives d n; with y = x * rrms, d y = d n * s and
// d x = rrms * (d y - y * mean(d y * y)). v: its gradient copied back into the token-major layout.
// The incoming gradients are read where they are, and d qkv is written where the caller says (rows
// of a wider gradient: gradBatchStride, gradRowStride). Grid and warps as the forward kernel's.
template <typename T, int kVecs>
__global__ void qkNormRopeBackward(const T* __restrict__ qkv, const float* __restrict__ qScale, const float* __restrict__ kScale,
                                   const float* __restrict__ rotations, const float* __restrict__ rrmsIn,
                                   const T* __restrict__ gradQ, const T* __restrict__ gradK, const T* __restrict__ gradV,
                                   HeadMajor gq, HeadMajor gk, HeadMajor gv, T* __restrict__ gradQkv, int64_t gradBatchStride,
                                   int64_t gradRowStride, TokenGeometry g) {
  const int64_t l = blockIdx.x, b = blockIdx.y;
  const T* token = qkv + b * g.qkvBatchStride + l * g.qkvRowStride;
  T* gradToken = gradQkv + b * gradBatchStride + l * gradRowStride;
  LaneConstants<kVecs> lc;
  loadLaneConstants(rotations + b * g.rotBatchStride + l * g.rotRowStride, qScale, kScale, g.dim, lc);
  for (int64_t h = threadIdx.x >> 5; h < g.heads; h += kWarpsPerBlock) {
    const T* incoming[3] = {gradQ + headMajorOffset(gq, b, h, l), gradK + headMajorOffset(gk, b, h, l),
                            gradV + headMajorOffset(gv, b, h, l)};
    float d[3][kVecs][kVec], x[2][kVecs][kVec];
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (channelOf(i) >= g.dim) continue;
#pragma unroll
      for (int part = 0; part < 3; ++part) loadFloats(incoming[part] + channelOf(i), d[part][i]);
#pragma unroll
      for (int part = 0; part < 2; ++part) loadFloats(token + (part * g.heads + h) * g.dim + channelOf(i), x[part][i]);
    }
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
      if (channelOf(i) < g.dim) storeVec(gradToken + (2 * g.heads + h) * g.dim + channelOf(i), d[2][i]);
#pragma unroll
    for (int part = 0; part < 2; ++part) {
      const float rrms = rrmsIn[((part * gridDim.y + b) * g.length + l) * g.heads + h];
      float dot = 0.0f;
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        if (channelOf(i) >= g.dim) continue;
        float dn[kVec];
        rotatePairs<true>(lc.rot[i], d[part][i], dn);
        const float4 s = lc.scale[part][i];
        const float sv[kVec] = {s.x, s.y, s.z, s.w};
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          x[part][i][e] *= rrms;          // y
          d[part][i][e] = dn[e] * sv[e];  // d y
          dot += d[part][i][e] * x[part][i][e];
        }
      }
      const float meanDot = warpSum(dot) / static_cast<float>(g.dim);
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        if (channelOf(i) >= g.dim) continue;
        float out[kVec];
#pragma unroll
        for (int e = 0; e < kVec; ++e) out[e] = rrms * (d[part][i][e] - x[part][i][e] * meanDot);
        storeVec(gradToken + (part * g.heads + h) * g.dim + channelOf(i), out);
      }
    }
  }
}

TokenGeometry geometryOf(const at::Tensor& qkv, const at::Tensor& rotations, int64_t heads, int64_t dim) {
  TokenGeometry g;
  g.length = qkv.size(1);
  g.heads = heads;
  g.dim = dim;
  g.qkvBatchStride = qkv.stride(0);
  g.qkvRowStride = qkv.stride(1);
  g.rotBatchStride = rotations.size(0) == 1 ? 0 : rotations.stride(0);
  g.rotRowStride = rotations.stride(2);
  return g;
}

dim3 tokensGrid(const at::Tensor& qkv) { return dim3(static_cast<unsigned int>(qkv.size(1)), static_cast<unsigned int>(qkv.size(0))); }

// The stride of dimension i where it is walked (a dimension of size 1 is not).
int64_t strideWalked(const at::Tensor& t, int64_t i) { return t.size(i) == 1 ? 0 : t.stride(i); }

// qkv as the kernels read it: rows of vectors (a copy where its strides or address do not allow).
at::Tensor vectorRows(const at::Tensor& qkv) {
  return vectorAligned(qkv, {strideWalked(qkv, 0), strideWalked(qkv, 1)}) ? qkv : qkv.contiguous();
}

// rotations as the kernels read them: each pair's matrix a float4.
at::Tensor vectorRotations(const at::Tensor& rot) {
  return vectorAligned(rot, {strideWalked(rot, 0), strideWalked(rot, 2)}) ? rot : rot.contiguous();
}

// Whether a [B, H, L, D] tensor can be read or written in place: D contiguous, the rest aligned.
bool vectorHeadMajorInPlace(const at::Tensor& t) {
  return t.stride(3) == 1 && vectorAligned(t, {strideWalked(t, 0), strideWalked(t, 1), strideWalked(t, 2)});
}

// A gradient [B, H, L, D] as the kernel reads it: in place where it can be, else a copy.
at::Tensor vectorHeadMajor(const at::Tensor& t) { return vectorHeadMajorInPlace(t) ? t : t.contiguous(); }

HeadMajor stridesOf(const at::Tensor& t) { return {strideWalked(t, 0), strideWalked(t, 1), strideWalked(t, 2)}; }

}  // namespace

at::Tensor qkNormRopeForwardCuda(const at::Tensor& qkvIn, const at::Tensor& qScale, const at::Tensor& kScale,
                                 const at::Tensor& rotationsIn, int64_t heads, double eps, const at::Tensor& q,
                                 const at::Tensor& k, const at::Tensor& v) {
  const int64_t dim = qScale.size(0);
  const at::Tensor qkv = vectorRows(qkvIn), rotations = vectorRotations(rotationsIn);
  const TokenGeometry g = geometryOf(qkv, rotations, heads, dim);
  const std::vector<int64_t> outSizes = {qkv.size(0), heads, g.length, dim};
  for (const at::Tensor* out : {&q, &k, &v})
    TORCH_CHECK(out->sizes() == outSizes && out->scalar_type() == qkv.scalar_type() && vectorHeadMajorInPlace(*out),
                "fused QK norm + RoPE: an output ", out->sizes(), " strides ", out->strides(), " is not ", outSizes,
                " in qkv's dtype with D contiguous for vector stores");
  at::Tensor rrms = at::empty({2, qkv.size(0), g.length, heads}, qkv.options().dtype(at::kFloat));
  if (qkv.size(0) * g.length * heads == 0) return rrms;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, qkv.scalar_type(), "sinter_qk_norm_rope_forward", [&] {
    const auto kernel = dim <= 32 * kVec ? qkNormRopeForward<scalar_t, 1> : qkNormRopeForward<scalar_t, kMaxVecsPerLane>;
    kernel<<<tokensGrid(qkv), kWarpsPerBlock * 32, 0, stream>>>(
        qkv.data_ptr<scalar_t>(), qScale.data_ptr<float>(), kScale.data_ptr<float>(), rotations.data_ptr<float>(),
        q.data_ptr<scalar_t>(), k.data_ptr<scalar_t>(), v.data_ptr<scalar_t>(), stridesOf(q), stridesOf(k), stridesOf(v),
        rrms.data_ptr<float>(), g, static_cast<float>(eps));
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return rrms;
}

void qkNormRopeBackwardCuda(const at::Tensor& qkvIn, const at::Tensor& qScale, const at::Tensor& kScale,
                            const at::Tensor& rotationsIn, const at::Tensor& rrms, const at::Tensor& gradQIn,
                            const at::Tensor& gradKIn, const at::Tensor& gradVIn, int64_t heads, const at::Tensor& gradQkv) {
  const int64_t dim = qScale.size(0);
  const at::Tensor qkv = vectorRows(qkvIn), rotations = vectorRotations(rotationsIn);
  const at::Tensor gradQ = vectorHeadMajor(gradQIn), gradK = vectorHeadMajor(gradKIn), gradV = vectorHeadMajor(gradVIn);
  const TokenGeometry g = geometryOf(qkv, rotations, heads, dim);
  TORCH_CHECK(gradQkv.sizes() == qkv.sizes() && gradQkv.stride(2) == 1 &&
                  vectorAligned(gradQkv, {strideWalked(gradQkv, 0), strideWalked(gradQkv, 1)}),
              "fused QK norm + RoPE: the gradient's destination ", gradQkv.sizes(), " strides ", gradQkv.strides(),
              " is not rows of qkv's shape ", qkv.sizes(), " for vector stores");
  if (qkv.size(0) * g.length * heads == 0) return;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, qkv.scalar_type(), "sinter_qk_norm_rope_backward", [&] {
    const auto kernel = dim <= 32 * kVec ? qkNormRopeBackward<scalar_t, 1> : qkNormRopeBackward<scalar_t, kMaxVecsPerLane>;
    kernel<<<tokensGrid(qkv), kWarpsPerBlock * 32, 0, stream>>>(
        qkv.data_ptr<scalar_t>(), qScale.data_ptr<float>(), kScale.data_ptr<float>(), rotations.data_ptr<float>(),
        rrms.data_ptr<float>(), gradQ.data_ptr<scalar_t>(), gradK.data_ptr<scalar_t>(), gradV.data_ptr<scalar_t>(),
        stridesOf(gradQ), stridesOf(gradK), stridesOf(gradV), gradQkv.data_ptr<scalar_t>(), strideWalked(gradQkv, 0),
        strideWalked(gradQkv, 1), g);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace sinter::kernels

#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "kernels/qk_norm_rope_cuda.h"
#include "kernels/vector_access.cuh"

namespace sinter::kernels {

namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kMaxVecsPerLane = 2;  // a warp's row: 32 lanes x 2 x 4 channels, heads of up to 256
// A warp takes this many consecutive heads of one token: the token's rotations and the scales are
// read once for all of them, and each lane has that many rows' loads in flight.
constexpr int kHeadsPerWarp = 4;

// Where the rows live: qkv's and the rotations' strides of b and l (elements).
struct RowGeometry {
  int64_t batch, length, heads, dim;
  int64_t qkvBatchStride, qkvRowStride;
  int64_t rotBatchStride, rotRowStride;  // rotations' batch stride is 0 when shared
};

// A [B, H, L, D] tensor's strides of b, h and l (D contiguous): the attention's inputs and their
// gradients, which may be slices of the joint sequence's.
struct HeadMajor {
  int64_t batch, head, row;
};

__device__ __forceinline__ int64_t headMajorOffset(const HeadMajor& s, int64_t b, int64_t h, int64_t l) {
  return b * s.batch + h * s.head + l * s.row;
}

// A warp's rows: part (0 = q, 1 = k, 2 = v) of sample b, token l, heads h0 .. h0 + count - 1.
struct RowGroup {
  int part, count;
  int64_t b, l, h0, index0;  // index0: (b, l, h0) row-major, the order the rows' 1 / rms are kept in
};

__device__ __forceinline__ bool groupOf(const RowGeometry& g, RowGroup& r) {
  const int64_t perToken = (g.heads + kHeadsPerWarp - 1) / kHeadsPerWarp, tokens = g.batch * g.length;
  const int64_t group = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (group >= 3 * tokens * perToken) return false;
  r.part = static_cast<int>(group / (tokens * perToken));
  const int64_t rest = group - r.part * tokens * perToken, token = rest / perToken;
  r.h0 = (rest - token * perToken) * kHeadsPerWarp;
  r.count = static_cast<int>(g.heads - r.h0 < kHeadsPerWarp ? g.heads - r.h0 : kHeadsPerWarp);
  r.b = token / g.length;
  r.l = token - r.b * g.length;
  r.index0 = token * g.heads + r.h0;
  return true;
}

// This lane's channels: vector i covers channels c .. c + 3, c = 4 (lane + 32 i), where c < D.
__device__ __forceinline__ int64_t channelOf(int i) { return static_cast<int64_t>((threadIdx.x & 31) + 32 * i) * kVec; }

// The rotations of this lane's channel pairs and their scales, for every vector the lane holds.
struct LaneRotation {
  float4 m[kMaxVecsPerLane][2];  // R_j = [[x, y], [z, w]] for the vector's two pairs
  float4 s[kMaxVecsPerLane];
};

__device__ __forceinline__ void loadLaneRotation(const float* rot, const float* scale, int64_t dim, LaneRotation& lr) {
#pragma unroll
  for (int i = 0; i < kMaxVecsPerLane; ++i) {
    const int64_t c = channelOf(i);
    if (c >= dim) continue;
    lr.m[i][0] = *reinterpret_cast<const float4*>(rot + 2 * c);
    lr.m[i][1] = *reinterpret_cast<const float4*>(rot + 2 * c + 4);
    lr.s[i] = *reinterpret_cast<const float4*>(scale + c);
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

__device__ __forceinline__ void scaleOf(const float4& s, float (&sv)[kVec]) {
  sv[0] = s.x;
  sv[1] = s.y;
  sv[2] = s.z;
  sv[3] = s.w;
}

// q and k: mean of squares, then out = R (x * rrms * s), rounded once; v: copied into the
// head-major layout. Each row is read once, with vector loads, and held in registers.
template <typename T>
__global__ void qkNormRopeForward(const T* __restrict__ qkv, const float* __restrict__ qScale, const float* __restrict__ kScale,
                                  const float* __restrict__ rotations, T* __restrict__ q, T* __restrict__ k, T* __restrict__ v,
                                  float* __restrict__ rrmsOut, RowGeometry g, float eps) {
  RowGroup r;
  if (!groupOf(g, r)) return;
  // Head j's row: x + j D in qkv, out + j L D in the head-major output.
  const T* x = qkv + r.b * g.qkvBatchStride + r.l * g.qkvRowStride + (r.part * g.heads + r.h0) * g.dim;
  T* out = (r.part == 0 ? q : r.part == 1 ? k : v) + ((r.b * g.heads + r.h0) * g.length + r.l) * g.dim;
  const int64_t outHeadStride = g.length * g.dim;
  float xs[kHeadsPerWarp][kMaxVecsPerLane][kVec];
#pragma unroll
  for (int j = 0; j < kHeadsPerWarp; ++j)
#pragma unroll
    for (int i = 0; i < kMaxVecsPerLane; ++i)
      if (j < r.count && channelOf(i) < g.dim) loadFloats(x + j * g.dim + channelOf(i), xs[j][i]);
  if (r.part == 2) {
#pragma unroll
    for (int j = 0; j < kHeadsPerWarp; ++j)
#pragma unroll
      for (int i = 0; i < kMaxVecsPerLane; ++i)
        if (j < r.count && channelOf(i) < g.dim) storeVec(out + j * outHeadStride + channelOf(i), xs[j][i]);
    return;
  }
  LaneRotation lr;
  loadLaneRotation(rotations + r.b * g.rotBatchStride + r.l * g.rotRowStride, r.part == 0 ? qScale : kScale, g.dim, lr);
  float* rrmsRows = rrmsOut + r.part * g.batch * g.length * g.heads + r.index0;
#pragma unroll
  for (int j = 0; j < kHeadsPerWarp; ++j) {
    if (j >= r.count) break;  // the same for the whole warp
    float squares = 0.0f;
#pragma unroll
    for (int i = 0; i < kMaxVecsPerLane; ++i)
      if (channelOf(i) < g.dim)
#pragma unroll
        for (int e = 0; e < kVec; ++e) squares += xs[j][i][e] * xs[j][i][e];
    const float rrms = rsqrtf(warpSum(squares) / static_cast<float>(g.dim) + eps);
#pragma unroll
    for (int i = 0; i < kMaxVecsPerLane; ++i) {
      const int64_t c = channelOf(i);
      if (c >= g.dim) continue;
      float sv[kVec], n[kVec], y[kVec];
      scaleOf(lr.s[i], sv);
#pragma unroll
      for (int e = 0; e < kVec; ++e) n[e] = xs[j][i][e] * rrms * sv[e];
      rotatePairs<false>(lr.m[i], n, y);
      storeVec(out + j * outHeadStride + c, y);
    }
    if ((threadIdx.x & 31) == 0) rrmsRows[j] = rrms;
  }
}

// q and k: the transpose rotation gives d n; with y = x * rrms, d y = d n * s and
// d x = rrms * (d y - y * mean(d y * y)). v: its gradient copied back into the token-major layout.
// The incoming gradients are read where they are (a slice of the joint sequence's is strided), and
// d qkv is written where the caller says (rows of a wider gradient: gradBatchStride, gradRowStride).
template <typename T>
__global__ void qkNormRopeBackward(const T* __restrict__ qkv, const float* __restrict__ qScale, const float* __restrict__ kScale,
                                   const float* __restrict__ rotations, const float* __restrict__ rrmsIn,
                                   const T* __restrict__ gradQ, const T* __restrict__ gradK, const T* __restrict__ gradV,
                                   HeadMajor gq, HeadMajor gk, HeadMajor gv, T* __restrict__ gradQkv, int64_t gradBatchStride,
                                   int64_t gradRowStride, RowGeometry g) {
  RowGroup r;
  if (!groupOf(g, r)) return;
  T* gx = gradQkv + r.b * gradBatchStride + r.l * gradRowStride + (r.part * g.heads + r.h0) * g.dim;  // head j at + j D
  const HeadMajor& gs = r.part == 0 ? gq : r.part == 1 ? gk : gv;
  const T* go = (r.part == 0 ? gradQ : r.part == 1 ? gradK : gradV) + headMajorOffset(gs, r.b, r.h0, r.l);  // head j at + j gs.head
  float d[kHeadsPerWarp][kMaxVecsPerLane][kVec];
#pragma unroll
  for (int j = 0; j < kHeadsPerWarp; ++j)
#pragma unroll
    for (int i = 0; i < kMaxVecsPerLane; ++i)
      if (j < r.count && channelOf(i) < g.dim) loadFloats(go + j * gs.head + channelOf(i), d[j][i]);
  if (r.part == 2) {
#pragma unroll
    for (int j = 0; j < kHeadsPerWarp; ++j)
#pragma unroll
      for (int i = 0; i < kMaxVecsPerLane; ++i)
        if (j < r.count && channelOf(i) < g.dim) storeVec(gx + j * g.dim + channelOf(i), d[j][i]);
    return;
  }
  const T* x = qkv + r.b * g.qkvBatchStride + r.l * g.qkvRowStride + (r.part * g.heads + r.h0) * g.dim;
  float y[kHeadsPerWarp][kMaxVecsPerLane][kVec];
#pragma unroll
  for (int j = 0; j < kHeadsPerWarp; ++j)
#pragma unroll
    for (int i = 0; i < kMaxVecsPerLane; ++i)
      if (j < r.count && channelOf(i) < g.dim) loadFloats(x + j * g.dim + channelOf(i), y[j][i]);
  LaneRotation lr;
  loadLaneRotation(rotations + r.b * g.rotBatchStride + r.l * g.rotRowStride, r.part == 0 ? qScale : kScale, g.dim, lr);
  const float* rrmsRows = rrmsIn + r.part * g.batch * g.length * g.heads + r.index0;
#pragma unroll
  for (int j = 0; j < kHeadsPerWarp; ++j) {
    if (j >= r.count) break;  // the same for the whole warp
    const float rrms = rrmsRows[j];
    float dot = 0.0f;
#pragma unroll
    for (int i = 0; i < kMaxVecsPerLane; ++i) {
      if (channelOf(i) >= g.dim) continue;
      float dn[kVec], sv[kVec];
      rotatePairs<true>(lr.m[i], d[j][i], dn);
      scaleOf(lr.s[i], sv);
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        y[j][i][e] *= rrms;
        d[j][i][e] = dn[e] * sv[e];  // d y
        dot += d[j][i][e] * y[j][i][e];
      }
    }
    const float meanDot = warpSum(dot) / static_cast<float>(g.dim);
#pragma unroll
    for (int i = 0; i < kMaxVecsPerLane; ++i) {
      if (channelOf(i) >= g.dim) continue;
      float out[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) out[e] = rrms * (d[j][i][e] - y[j][i][e] * meanDot);
      storeVec(gx + j * g.dim + channelOf(i), out);
    }
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

// Blocks for every part's rows, kHeadsPerWarp heads of a token per warp.
unsigned int blocksFor(const RowGeometry& g) {
  const int64_t groups = 3 * g.batch * g.length * ((g.heads + kHeadsPerWarp - 1) / kHeadsPerWarp);
  return static_cast<unsigned int>((groups + kWarpsPerBlock - 1) / kWarpsPerBlock);
}

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

// A gradient [B, H, L, D] as the kernel reads it: in place where D is contiguous and the rest aligned.
at::Tensor vectorHeadMajor(const at::Tensor& t) {
  const bool inPlace = t.stride(3) == 1 && vectorAligned(t, {strideWalked(t, 0), strideWalked(t, 1), strideWalked(t, 2)});
  return inPlace ? t : t.contiguous();
}

HeadMajor stridesOf(const at::Tensor& t) { return {strideWalked(t, 0), strideWalked(t, 1), strideWalked(t, 2)}; }

}  // namespace

std::vector<at::Tensor> qkNormRopeForwardCuda(const at::Tensor& qkvIn, const at::Tensor& qScale, const at::Tensor& kScale,
                                              const at::Tensor& rotationsIn, int64_t heads, double eps) {
  const int64_t dim = qScale.size(0);
  const at::Tensor qkv = vectorRows(qkvIn), rotations = vectorRotations(rotationsIn);
  const RowGeometry g = geometryOf(qkv, rotations, heads, dim);
  at::Tensor q = at::empty({g.batch, heads, g.length, dim}, qkv.options());
  at::Tensor k = at::empty_like(q), v = at::empty_like(q);
  at::Tensor rrms = at::empty({2, g.batch, g.length, heads}, qkv.options().dtype(at::kFloat));
  const int64_t rows = 3 * g.batch * g.length * heads;
  if (rows == 0) return {q, k, v, rrms};
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, qkv.scalar_type(), "sinter_qk_norm_rope_forward", [&] {
    qkNormRopeForward<scalar_t><<<blocksFor(g), kWarpsPerBlock * 32, 0, stream>>>(
        qkv.data_ptr<scalar_t>(), qScale.data_ptr<float>(), kScale.data_ptr<float>(), rotations.data_ptr<float>(),
        q.data_ptr<scalar_t>(), k.data_ptr<scalar_t>(), v.data_ptr<scalar_t>(), rrms.data_ptr<float>(), g,
        static_cast<float>(eps));
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {q, k, v, rrms};
}

void qkNormRopeBackwardCuda(const at::Tensor& qkvIn, const at::Tensor& qScale, const at::Tensor& kScale,
                            const at::Tensor& rotationsIn, const at::Tensor& rrms, const at::Tensor& gradQIn,
                            const at::Tensor& gradKIn, const at::Tensor& gradVIn, int64_t heads, const at::Tensor& gradQkv) {
  const int64_t dim = qScale.size(0);
  const at::Tensor qkv = vectorRows(qkvIn), rotations = vectorRotations(rotationsIn);
  const at::Tensor gradQ = vectorHeadMajor(gradQIn), gradK = vectorHeadMajor(gradKIn), gradV = vectorHeadMajor(gradVIn);
  const RowGeometry g = geometryOf(qkv, rotations, heads, dim);
  TORCH_CHECK(gradQkv.sizes() == qkv.sizes() && gradQkv.stride(2) == 1 &&
                  vectorAligned(gradQkv, {strideWalked(gradQkv, 0), strideWalked(gradQkv, 1)}),
              "fused QK norm + RoPE: the gradient's destination ", gradQkv.sizes(), " strides ", gradQkv.strides(),
              " is not rows of qkv's shape ", qkv.sizes(), " for vector stores");
  if (g.batch * g.length * heads == 0) return;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, qkv.scalar_type(), "sinter_qk_norm_rope_backward", [&] {
    qkNormRopeBackward<scalar_t><<<blocksFor(g), kWarpsPerBlock * 32, 0, stream>>>(
        qkv.data_ptr<scalar_t>(), qScale.data_ptr<float>(), kScale.data_ptr<float>(), rotations.data_ptr<float>(),
        rrms.data_ptr<float>(), gradQ.data_ptr<scalar_t>(), gradK.data_ptr<scalar_t>(), gradV.data_ptr<scalar_t>(),
        stridesOf(gradQ), stridesOf(gradK), stridesOf(gradV), gradQkv.data_ptr<scalar_t>(), strideWalked(gradQkv, 0),
        strideWalked(gradQkv, 1), g);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace sinter::kernels

#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "kernels/qk_norm_rope_cuda.h"
#include "kernels/vector_access.cuh"

namespace sinter::kernels {

namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kMaxVecsPerLane = 2;  // a warp's row: 32 lanes x 2 x 4 channels, heads of up to 256

// Where one row (part 0 = q, 1 = k, 2 = v; sample b, token l, head h) lives.
struct RowGeometry {
  int64_t batch, length, heads, dim;
  int64_t qkvBatchStride, qkvRowStride;  // qkv's strides of b and l (elements)
  int64_t rotBatchStride, rotRowStride;  // rotations' strides of b (0 when shared) and l
};

// A [B, H, L, D] tensor's strides of b, h and l (D contiguous): the attention's inputs and their
// gradients, which may be slices of the joint sequence's.
struct HeadMajor {
  int64_t batch, head, row;
};

__device__ __forceinline__ int64_t headMajorOffset(const HeadMajor& s, int64_t b, int64_t h, int64_t l) {
  return b * s.batch + h * s.head + l * s.row;
}

struct Row {
  int part;
  int64_t b, l, h, index;  // index: (b, l, h) row-major, the rows' 1 / rms are kept in that order
};

__device__ __forceinline__ bool rowOf(const RowGeometry& g, Row& r) {
  const int64_t rowsPerPart = g.batch * g.length * g.heads;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= 3 * rowsPerPart) return false;
  r.part = static_cast<int>(row / rowsPerPart);
  r.index = row - r.part * rowsPerPart;
  r.h = r.index % g.heads;
  r.l = (r.index / g.heads) % g.length;
  r.b = r.index / (g.heads * g.length);
  return true;
}

// This lane's channels: vector i covers channels c .. c + 3, c = 4 (lane + 32 i), where c < D.
__device__ __forceinline__ int64_t channelOf(int i) { return static_cast<int64_t>((threadIdx.x & 31) + 32 * i) * kVec; }

// out = R n for the vector's two channel pairs, R_j = [[r00, r01], [r10, r11]] packed per pair; or
// R^T n (kTranspose: the backward pass's d n = R^T d out).
template <bool kTranspose>
__device__ __forceinline__ void rotatePairs(const float* rot, int64_t c, const float (&n)[kVec], float (&out)[kVec]) {
  const float4 m[2] = {*reinterpret_cast<const float4*>(rot + 2 * c), *reinterpret_cast<const float4*>(rot + 2 * c + 4)};
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    const float r01 = kTranspose ? m[p].z : m[p].y, r10 = kTranspose ? m[p].y : m[p].z;
    out[2 * p] = m[p].x * n[2 * p] + r01 * n[2 * p + 1];
    out[2 * p + 1] = r10 * n[2 * p] + m[p].w * n[2 * p + 1];
  }
}

// One warp per row. q and k: mean of squares, then out = R (x * rrms * s), rounded once; v: copied
// into the head-major layout. The row is read once, with vector loads, and held in registers.
template <typename T>
__global__ void qkNormRopeForward(const T* __restrict__ qkv, const float* __restrict__ qScale, const float* __restrict__ kScale,
                                  const float* __restrict__ rotations, T* __restrict__ q, T* __restrict__ k, T* __restrict__ v,
                                  float* __restrict__ rrmsOut, RowGeometry g, float eps) {
  Row r;
  if (!rowOf(g, r)) return;
  const T* x = qkv + r.b * g.qkvBatchStride + r.l * g.qkvRowStride + (r.part * g.heads + r.h) * g.dim;
  T* out = (r.part == 0 ? q : r.part == 1 ? k : v) + ((r.b * g.heads + r.h) * g.length + r.l) * g.dim;
  float xs[kMaxVecsPerLane][kVec];
  float squares = 0.0f;
#pragma unroll
  for (int i = 0; i < kMaxVecsPerLane; ++i) {
    if (channelOf(i) >= g.dim) continue;
    loadFloats(x + channelOf(i), xs[i]);
#pragma unroll
    for (int e = 0; e < kVec; ++e) squares += xs[i][e] * xs[i][e];
  }
  if (r.part == 2) {
#pragma unroll
    for (int i = 0; i < kMaxVecsPerLane; ++i)
      if (channelOf(i) < g.dim) storeVec(out + channelOf(i), xs[i]);
    return;
  }
  const float rrms = rsqrtf(warpSum(squares) / static_cast<float>(g.dim) + eps);
  const float* scale = r.part == 0 ? qScale : kScale;
  const float* rot = rotations + r.b * g.rotBatchStride + r.l * g.rotRowStride;
#pragma unroll
  for (int i = 0; i < kMaxVecsPerLane; ++i) {
    const int64_t c = channelOf(i);
    if (c >= g.dim) continue;
    const float4 s = *reinterpret_cast<const float4*>(scale + c);
    const float n[kVec] = {xs[i][0] * rrms * s.x, xs[i][1] * rrms * s.y, xs[i][2] * rrms * s.z, xs[i][3] * rrms * s.w};
    float y[kVec];
    rotatePairs<false>(rot, c, n, y);
    storeVec(out + c, y);
  }
  if ((threadIdx.x & 31) == 0) rrmsOut[r.part * g.batch * g.length * g.heads + r.index] = rrms;
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
  Row r;
  if (!rowOf(g, r)) return;
  T* gx = gradQkv + r.b * gradBatchStride + r.l * gradRowStride + (r.part * g.heads + r.h) * g.dim;
  const T* go = r.part == 0 ? gradQ + headMajorOffset(gq, r.b, r.h, r.l)
              : r.part == 1 ? gradK + headMajorOffset(gk, r.b, r.h, r.l)
                            : gradV + headMajorOffset(gv, r.b, r.h, r.l);
  float d[kMaxVecsPerLane][kVec];
#pragma unroll
  for (int i = 0; i < kMaxVecsPerLane; ++i)
    if (channelOf(i) < g.dim) loadFloats(go + channelOf(i), d[i]);
  if (r.part == 2) {
#pragma unroll
    for (int i = 0; i < kMaxVecsPerLane; ++i)
      if (channelOf(i) < g.dim) storeVec(gx + channelOf(i), d[i]);
    return;
  }
  const T* x = qkv + r.b * g.qkvBatchStride + r.l * g.qkvRowStride + (r.part * g.heads + r.h) * g.dim;
  const float* scale = r.part == 0 ? qScale : kScale;
  const float* rot = rotations + r.b * g.rotBatchStride + r.l * g.rotRowStride;
  const float rrms = rrmsIn[r.part * g.batch * g.length * g.heads + r.index];
  float y[kMaxVecsPerLane][kVec], dy[kMaxVecsPerLane][kVec];
  float dot = 0.0f;
#pragma unroll
  for (int i = 0; i < kMaxVecsPerLane; ++i) {
    const int64_t c = channelOf(i);
    if (c >= g.dim) continue;
    loadFloats(x + c, y[i]);
    float dn[kVec];
    rotatePairs<true>(rot, c, d[i], dn);
    const float4 s = *reinterpret_cast<const float4*>(scale + c);
    const float sv[kVec] = {s.x, s.y, s.z, s.w};
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      y[i][e] *= rrms;
      dy[i][e] = dn[e] * sv[e];
      dot += dy[i][e] * y[i][e];
    }
  }
  const float meanDot = warpSum(dot) / static_cast<float>(g.dim);
#pragma unroll
  for (int i = 0; i < kMaxVecsPerLane; ++i) {
    if (channelOf(i) >= g.dim) continue;
    float out[kVec];
#pragma unroll
    for (int e = 0; e < kVec; ++e) out[e] = rrms * (dy[i][e] - y[i][e] * meanDot);
    storeVec(gx + channelOf(i), out);
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
    qkNormRopeForward<scalar_t><<<blocksFor(rows), kWarpsPerBlock * 32, 0, stream>>>(
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
    qkNormRopeBackward<scalar_t><<<blocksFor(3 * g.batch * g.length * heads), kWarpsPerBlock * 32, 0, stream>>>(
        qkv.data_ptr<scalar_t>(), qScale.data_ptr<float>(), kScale.data_ptr<float>(), rotations.data_ptr<float>(),
        rrms.data_ptr<float>(), gradQ.data_ptr<scalar_t>(), gradK.data_ptr<scalar_t>(), gradV.data_ptr<scalar_t>(),
        stridesOf(gradQ), stridesOf(gradK), stridesOf(gradV), gradQkv.data_ptr<scalar_t>(), strideWalked(gradQkv, 0),
        strideWalked(gradQkv, 1), g);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace sinter::kernels

#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Float8_e4m3fn.h>
#include <c10/util/Float8_e5m2.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/float8_quantize_rows_cuda.h"

namespace sinter::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kPerGroup = 8;  // elements a thread loads at once (16 bytes of bfloat16), written as one 8-byte store

template <typename T>
struct alignas(sizeof(T) * kPerGroup) Group {
  T v[kPerGroup];
};

// max that keeps a NaN (as torch's amax does), so a NaN row gets a NaN scale on both paths.
__device__ __forceinline__ float nanMax(float a, float b) { return (b > a || b != b) ? b : a; }

// The block's largest value, given to every thread (kThreads threads).
__device__ float blockMax(float v, float (&shared)[kThreads / 32]) {
  for (int offset = 16; offset > 0; offset >>= 1) v = nanMax(v, __shfl_xor_sync(0xffffffffu, v, offset));
  if ((threadIdx.x & 31) == 0) shared[threadIdx.x >> 5] = v;
  __syncthreads();
  float m = shared[0];
#pragma unroll
  for (int w = 1; w < kThreads / 32; ++w) m = nanMax(m, shared[w]);
  __syncthreads();  // shared is written again for the next row
  return m;
}

// A float32 value's float8 code, rounded to nearest even as PyTorch's cast rounds it. e4m3 from
// Ada on by the hardware's conversion: one instruction, where c10's software conversion takes some
// thirty a value, enough to make this memory-bound kernel wait on arithmetic. It saturates at 448
// where c10's turns values from 464 up into NaN; no value reaches 464 here (x * factor is at most
// formatMax (1 + 2^-9) after the factor's bfloat16 rounding, about 448.9), so the codes are the
// same. e5m2 by c10's conversion (on Blackwell the hardware's, as PyTorch's cast there avoids a
// ptxas miscompilation of the software form's subnormals).
template <typename F8>
__device__ __forceinline__ uint32_t float8Code(float v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if constexpr (std::is_same_v<F8, c10::Float8_e4m3fn>) return __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
  if constexpr (std::is_same_v<F8, c10::Float8_e5m2>) return __nv_cvt_float_to_fp8(v, __NV_NOSAT, __NV_E5M2);
#endif
  return F8(v).x;
}

// Four float8 codes of x * factor, packed little-endian (the order of the elements in memory).
template <typename F8, typename T>
__device__ __forceinline__ uint32_t packCodes(const T* v, float factor) {
  uint32_t packed = 0;
#pragma unroll
  for (int e = 0; e < 4; ++e)
    // x * factor is exact in float32 for bfloat16 and float16 x (a bfloat16 factor: at most 8 + 11
    // significant bits), then rounded once to the format.
    packed |= float8Code<F8>(__fmul_rn(static_cast<float>(v[e]), factor)) << (8 * e);
  return packed;
}

// The row's amax from this thread's values, over the threads sharing the row: a warp, or the
// whole block (kThreads) with `shared` joining its warps.
template <int kRowThreads>
__device__ __forceinline__ float rowMax(float v, float (&shared)[kThreads / 32]) {
  if constexpr (kRowThreads == kThreads) return blockMax(v, shared);
  for (int offset = kRowThreads / 2; offset > 0; offset >>= 1) v = nanMax(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// The factor of a row with this amax (its scale is 1 / factor), following
// models/weights/float8_compute.cpp's torch operators step by step (reciprocal, multiply, round to bfloat16,
// reciprocal; each IEEE round-to-nearest), so both paths give the same bits.
__device__ __forceinline__ float rowFactor(float amax, float formatMax, float smallestAmax) {
  const float clamped = amax < smallestAmax ? smallestAmax : amax;  // a NaN stays NaN, as clamp_min keeps it
  return static_cast<float>(c10::BFloat16(__fmul_rn(__frcp_rn(clamped), formatMax)));
}

// Rows of at most kRowThreads * G groups, each read once into registers (the looping kernel below
// reads a row again from cache for its codes): kRowThreads (a warp, or the block) share a row, a
// thread issuing its G loads before it uses any, then the amax, then the codes from the registers.
template <typename T, typename F8, int kRowThreads, int G>
__global__ void __launch_bounds__(kThreads)
    quantizeHeldRows(const T* __restrict__ in, uint8_t* __restrict__ out, float* __restrict__ scales, int64_t rows,
                     int64_t groupsPerRow, float formatMax, float smallestAmax) {
  constexpr int kRowsPerBlock = kThreads / kRowThreads;
  __shared__ float shared[kThreads / 32];
  const int lane = threadIdx.x % kRowThreads;
  // Every thread of a block runs the same number of iterations (blockMax synchronises the block).
  for (int64_t first = int64_t{blockIdx.x} * kRowsPerBlock; first < rows; first += int64_t{gridDim.x} * kRowsPerBlock) {
    const int64_t row = first + threadIdx.x / kRowThreads;
    const bool live = row < rows;
    const Group<T>* src = reinterpret_cast<const Group<T>*>(in + row * groupsPerRow * kPerGroup);
    Group<T> x[G];
    float amax = 0.0f;
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const int64_t index = lane + int64_t{g} * kRowThreads;
      if (live && index < groupsPerRow) x[g] = src[index];
    }
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const int64_t index = lane + int64_t{g} * kRowThreads;
      if (live && index < groupsPerRow) {
#pragma unroll
        for (int e = 0; e < kPerGroup; ++e) amax = nanMax(amax, fabsf(static_cast<float>(x[g].v[e])));
      }
    }
    amax = rowMax<kRowThreads>(amax, shared);
    if (!live) continue;
    const float factor = rowFactor(amax, formatMax, smallestAmax);
    if (lane == 0) scales[row] = __frcp_rn(factor);
    uint2* dst = reinterpret_cast<uint2*>(out + row * groupsPerRow * kPerGroup);
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const int64_t index = lane + int64_t{g} * kRowThreads;
      if (index < groupsPerRow) dst[index] = make_uint2(packCodes<F8>(x[g].v, factor), packCodes<F8>(x[g].v + 4, factor));
    }
  }
}

// Rows longer than the held kernels take: one block a row, read once for its amax and again (from
// cache) for the codes.
template <typename T, typename F8>
__global__ void __launch_bounds__(kThreads)
    quantizeRows(const T* __restrict__ in, uint8_t* __restrict__ out, float* __restrict__ scales, int64_t rows,
                 int64_t groupsPerRow, float formatMax, float smallestAmax) {
  __shared__ float shared[kThreads / 32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const Group<T>* src = reinterpret_cast<const Group<T>*>(in + row * groupsPerRow * kPerGroup);
    float amax = 0.0f;
    for (int64_t g = threadIdx.x; g < groupsPerRow; g += kThreads) {
      const Group<T> x = src[g];
#pragma unroll
      for (int e = 0; e < kPerGroup; ++e) amax = nanMax(amax, fabsf(static_cast<float>(x.v[e])));
    }
    amax = blockMax(amax, shared);
    const float factor = rowFactor(amax, formatMax, smallestAmax);
    if (threadIdx.x == 0) scales[row] = __frcp_rn(factor);
    uint2* dst = reinterpret_cast<uint2*>(out + row * groupsPerRow * kPerGroup);
    for (int64_t g = threadIdx.x; g < groupsPerRow; g += kThreads) {
      const Group<T> x = src[g];
      dst[g] = make_uint2(packCodes<F8>(x.v, factor), packCodes<F8>(x.v + 4, factor));
    }
  }
}

template <typename T, typename F8, int kRowThreads, int G>
void launchHeld(const at::Tensor& x, at::Tensor& data, at::Tensor& scale, float formatMax, float smallestAmax) {
  const int64_t rows = x.size(0), groupsPerRow = x.size(1) / kPerGroup;
  constexpr int64_t kRowsPerBlock = kThreads / kRowThreads;
  const int64_t blocks = std::min<int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock, int64_t{1} << 20);
  quantizeHeldRows<T, F8, kRowThreads, G><<<static_cast<unsigned int>(blocks), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<T>(), static_cast<uint8_t*>(data.data_ptr()), scale.data_ptr<float>(), rows, groupsPerRow, formatMax,
      smallestAmax);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename T, typename F8>
void launch(const at::Tensor& x, at::Tensor& data, at::Tensor& scale, float formatMax, float smallestAmax) {
  const int64_t rows = x.size(0), groupsPerRow = x.size(1) / kPerGroup;
  // A warp a row up to 4096 elements (FLUX's 3072-wide activations), the block a row up to 24576
  // (its 9216-21504-wide outputs' gradients, 15360-wide joins), the looping kernel beyond.
  if (groupsPerRow <= 32 * 4) return launchHeld<T, F8, 32, 4>(x, data, scale, formatMax, smallestAmax);
  if (groupsPerRow <= 32 * 8) return launchHeld<T, F8, 32, 8>(x, data, scale, formatMax, smallestAmax);
  if (groupsPerRow <= 32 * 12) return launchHeld<T, F8, 32, 12>(x, data, scale, formatMax, smallestAmax);
  if (groupsPerRow <= 32 * 16) return launchHeld<T, F8, 32, 16>(x, data, scale, formatMax, smallestAmax);
  if (groupsPerRow <= kThreads * 4) return launchHeld<T, F8, kThreads, 4>(x, data, scale, formatMax, smallestAmax);
  if (groupsPerRow <= kThreads * 8) return launchHeld<T, F8, kThreads, 8>(x, data, scale, formatMax, smallestAmax);
  if (groupsPerRow <= kThreads * 12) return launchHeld<T, F8, kThreads, 12>(x, data, scale, formatMax, smallestAmax);
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 20);
  quantizeRows<T, F8><<<static_cast<unsigned int>(blocks), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<T>(), static_cast<uint8_t*>(data.data_ptr()), scale.data_ptr<float>(), rows, groupsPerRow, formatMax,
      smallestAmax);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

std::pair<at::Tensor, at::Tensor> float8QuantizeRowsCuda(const at::Tensor& x, at::ScalarType float8Type, float formatMax,
                                                         float smallestAmax) {
  TORCH_CHECK(float8Type == at::kFloat8_e4m3fn || float8Type == at::kFloat8_e5m2,
              "float8 row quantisation: to float8_e4m3fn or float8_e5m2, not ", float8Type);
  at::Tensor data = at::empty(x.sizes(), x.options().dtype(float8Type));
  at::Tensor scale = at::empty({x.size(0), 1}, x.options().dtype(at::kFloat));
  if (x.size(0) == 0) return {data, scale};
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "float8QuantizeRows", [&] {
    if (float8Type == at::kFloat8_e4m3fn)
      launch<scalar_t, c10::Float8_e4m3fn>(x, data, scale, formatMax, smallestAmax);
    else
      launch<scalar_t, c10::Float8_e5m2>(x, data, scale, formatMax, smallestAmax);
  });
  return {data, scale};
}

}  // namespace sinter::kernels

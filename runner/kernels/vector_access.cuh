#pragma once
// Device helpers the project's kernels share: kVec-element vector loads and stores (one memory
// instruction per lane where vectorAligned() holds), computed in float32, and a warp's sum.
#include "kernels/vector_alignment.h"

namespace sinter::kernels {

template <typename T>
struct alignas(sizeof(T) * kVec) Vec {
  T v[kVec];
};

template <typename T>
__device__ __forceinline__ Vec<T> loadVec(const T* p) {
  return *reinterpret_cast<const Vec<T>*>(p);
}

// The 4 elements at p as float32.
template <typename T>
__device__ __forceinline__ void loadFloats(const T* p, float (&f)[kVec]) {
  const Vec<T> in = loadVec(p);
#pragma unroll
  for (int e = 0; e < kVec; ++e) f[e] = static_cast<float>(in.v[e]);
}

template <typename T>
__device__ __forceinline__ void storeVec(T* p, const float (&f)[kVec]) {
  Vec<T> out;
#pragma unroll
  for (int e = 0; e < kVec; ++e) out.v[e] = static_cast<T>(f[e]);
  *reinterpret_cast<Vec<T>*>(p) = out;
}

__device__ __forceinline__ float warpSum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

}  // namespace sinter::kernels

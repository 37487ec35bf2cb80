#pragma once
// Device helpers the project's kernels share: 4-element vector loads and stores (8 bytes of
// bfloat16 or float16, 16 of float32: one memory instruction per lane where the data is aligned to
// them), computed in float32, and a warp's sum.
#include <cstdint>
#include <initializer_list>

namespace sinter::kernels {

constexpr int kVec = 4;  // elements per vector load

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

// Whether a tensor's data at `address` with these element strides can be read with vector loads.
inline bool vectorAligned(const void* address, size_t elementSize, std::initializer_list<int64_t> strides) {
  if (reinterpret_cast<uintptr_t>(address) % (elementSize * kVec)) return false;
  for (int64_t s : strides)
    if (s % kVec) return false;
  return true;
}

}  // namespace sinter::kernels

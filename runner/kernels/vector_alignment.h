#pragma once
// The vector width the project's kernels load at, and whether a tensor's data can be read at it: for
// the launchers and autograd functions on the host (vector_access.cuh does the loads on the device).
#include <ATen/ATen.h>

#include <cstdint>
#include <initializer_list>

namespace sinter::kernels {

constexpr int kVec = 4;  // elements per vector load: 8 bytes of bfloat16 or float16, 16 of float32

// Whether t's data pointer, and each of the element strides given, falls on the vector size.
inline bool vectorAligned(const at::Tensor& t, std::initializer_list<int64_t> strides) {
  if (reinterpret_cast<std::uintptr_t>(t.data_ptr()) % (t.element_size() * kVec)) return false;
  for (int64_t s : strides)
    if (s % kVec) return false;
  return true;
}

}  // namespace sinter::kernels

#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <cstdint>

#include "kernels/float8_upcast_cuda.h"

namespace sinter::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 8;  // one 8-byte load of float8 codes a thread

// An e4m3fn code (sign, 4 exponent bits of bias 7, 3 mantissa bits; no infinities, S.1111.111 is
// NaN) as float32, from its bits.
__device__ __forceinline__ float e4m3ToFloat(uint32_t code) {
  const uint32_t sign = (code & 0x80u) << 24, exponent = (code >> 3) & 0xFu, mantissa = code & 0x7u;
  if (exponent == 0xFu && mantissa == 0x7u) return __uint_as_float(sign | 0x7FC00000u);
  if (exponent == 0u) {  // subnormal: mantissa * 2^-9
    const float magnitude = static_cast<float>(mantissa) * 0.001953125f;
    return sign ? -magnitude : magnitude;
  }
  return __uint_as_float(sign | ((exponent + 120u) << 23) | (mantissa << 20));
}

template <typename T>
struct alignas(sizeof(T) * kPerThread) Group {
  T v[kPerThread];
};

template <typename T>
__global__ void float8Upcast(const uint8_t* __restrict__ in, T* __restrict__ out, int64_t groups, int64_t n) {
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (int64_t g = first; g < groups; g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint2 codes = reinterpret_cast<const uint2*>(in)[g];
    Group<T> o;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      o.v[e] = static_cast<T>(e4m3ToFloat((codes.x >> (8 * e)) & 0xFFu));
      o.v[4 + e] = static_cast<T>(e4m3ToFloat((codes.y >> (8 * e)) & 0xFFu));
    }
    reinterpret_cast<Group<T>*>(out)[g] = o;
  }
  // The last n % 8 codes, one a thread.
  const int64_t i = groups * kPerThread + first;
  if (i < n) out[i] = static_cast<T>(e4m3ToFloat(in[i]));
}

}  // namespace

at::Tensor float8UpcastCuda(const at::Tensor& stored, at::ScalarType dtype) {
  at::Tensor out = at::empty(stored.sizes(), stored.options().dtype(dtype));
  const int64_t n = stored.numel(), groups = n / kPerThread;
  if (n == 0) return out;
  const int64_t blocks = std::clamp<int64_t>((groups + kThreads - 1) / kThreads, 1, int64_t{1} << 20);
  const uint8_t* in = static_cast<const uint8_t*>(stored.data_ptr());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "float8Upcast", [&] {
    float8Upcast<scalar_t><<<static_cast<unsigned int>(blocks), kThreads, 0, stream>>>(in, out.data_ptr<scalar_t>(), groups, n);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace sinter::kernels

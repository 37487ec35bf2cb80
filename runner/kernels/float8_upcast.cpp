#include <cstdint>
#include <stdexcept>

#include "kernels/fused_kernels.h"

#if SINTER_WITH_CUDA_KERNELS
#include "kernels/float8_upcast_cuda.h"
#endif

namespace sinter::kernels {

#if SINTER_WITH_CUDA_KERNELS

bool float8UpcastFits(const torch::Tensor& stored) {
  return stored.is_cuda() && stored.scalar_type() == at::kFloat8_e4m3fn && stored.is_contiguous() &&
         reinterpret_cast<std::uintptr_t>(stored.data_ptr()) % 8 == 0;
}

torch::Tensor float8Upcast(const torch::Tensor& stored, torch::ScalarType dtype) {
  TORCH_CHECK(float8UpcastFits(stored), "float8 upcast: a contiguous CUDA float8_e4m3fn tensor is needed, got ",
              stored.scalar_type(), " on ", stored.device());
  TORCH_CHECK(at::isFloatingType(dtype) && !at::isFloat8Type(dtype), "float8 upcast: to float64, float32, float16 or bfloat16, not ",
              dtype);
  return float8UpcastCuda(stored, dtype);
}

#else

bool float8UpcastFits(const torch::Tensor&) { return false; }

torch::Tensor float8Upcast(const torch::Tensor&, torch::ScalarType) {
  throw std::runtime_error("float8 upcast: this build has no CUDA kernels");
}

#endif

}  // namespace sinter::kernels

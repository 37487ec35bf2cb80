#include <cstdint>
#include <stdexcept>

#include "kernels/fused_kernels.h"

#if SINTER_WITH_CUDA_KERNELS
#include "kernels/float8_quantize_rows_cuda.h"
#endif

namespace sinter::kernels {

#if SINTER_WITH_CUDA_KERNELS

bool float8QuantizeRowsFits(const torch::Tensor& x) {
  const torch::ScalarType t = x.scalar_type();
  if (!x.is_cuda() || x.dim() != 2 || !x.is_contiguous() || x.size(1) == 0 || x.size(1) % 16 != 0) return false;
  if (t != torch::kBFloat16 && t != torch::kHalf && t != torch::kFloat32) return false;
  // The kernel loads 8 elements at once.
  return reinterpret_cast<std::uintptr_t>(x.data_ptr()) % (x.element_size() * 8) == 0;
}

std::vector<torch::Tensor> float8QuantizeRows(const torch::Tensor& x, torch::ScalarType float8Type, double formatMax,
                                              double smallestAmax) {
  TORCH_CHECK(float8QuantizeRowsFits(x), "float8 row quantisation: a contiguous CUDA [rows, K] tensor of bfloat16, float16 or ",
              "float32 with K a multiple of 16 is needed, got ", x.scalar_type(), " ", x.sizes(), " on ", x.device());
  // The same float32 constants the torch operators convert these to (a double scalar becomes the
  // tensor's float32 by a cast).
  const auto quantized = float8QuantizeRowsCuda(x, float8Type, static_cast<float>(formatMax), static_cast<float>(smallestAmax));
  return {quantized.first, quantized.second};
}

#else

bool float8QuantizeRowsFits(const torch::Tensor&) { return false; }

std::vector<torch::Tensor> float8QuantizeRows(const torch::Tensor&, torch::ScalarType, double, double) {
  throw std::runtime_error("float8 row quantisation: this build has no CUDA kernels");
}

#endif

}  // namespace sinter::kernels

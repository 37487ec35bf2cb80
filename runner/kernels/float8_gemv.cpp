#include <cstdint>
#include <stdexcept>

#include "kernels/fused_kernels.h"

#if SINTER_WITH_CUDA_KERNELS
#include "kernels/float8_gemv_cuda.h"
#include "kernels/vector_alignment.h"
#endif

namespace sinter::kernels {

#if SINTER_WITH_CUDA_KERNELS

bool float8GemvFits(const torch::Tensor& rows, const torch::Tensor& stored, const torch::Tensor& scale) {
  if (!rows.is_cuda() || rows.dim() != 2 || !rows.is_contiguous() || rows.size(0) == 0 || rows.size(0) > kFloat8GemvMaxRows)
    return false;
  if (!at::isFloatingType(rows.scalar_type()) || at::isFloat8Type(rows.scalar_type())) return false;
  if (stored.scalar_type() != at::kFloat8_e4m3fn || stored.dim() != 2 || !stored.is_contiguous() || stored.device() != rows.device())
    return false;
  // 16 codes a load, and the backward's block a thread per 16 input channels (1024 at most).
  const int64_t n = stored.size(0), k = stored.size(1);
  if (k == 0 || k % 16 != 0 || k > 16 * 1024 || n == 0 || reinterpret_cast<std::uintptr_t>(stored.data_ptr()) % 16 != 0) return false;
  if (scale.scalar_type() != at::kFloat || !scale.is_contiguous() || scale.device() != rows.device() ||
      (scale.numel() != 1 && scale.numel() != n))
    return false;
  return vectorAligned(rows, {rows.size(1)});
}

torch::Tensor float8GemvForward(const torch::Tensor& x, const torch::Tensor& stored, const torch::Tensor& scale,
                                const torch::Tensor& bias) {
  TORCH_CHECK(float8GemvFits(x, stored, scale) && x.size(1) == stored.size(1),
              "float8 GEMV: x [M <= 4, K] against a contiguous e4m3 weight [N, K] (K a multiple of 16) and a float32 scale ",
              "on the same CUDA device is needed, got x ", x.sizes(), " ", x.scalar_type(), ", weight ", stored.sizes(), " ",
              stored.scalar_type(), ", scale ", scale.sizes());
  const torch::Tensor b = bias.defined() ? bias.to(x.scalar_type()).contiguous() : bias;
  TORCH_CHECK(!b.defined() || b.numel() == stored.size(0), "float8 GEMV: a bias of ", stored.size(0), " values is needed, got ",
              b.sizes());
  return float8GemvForwardCuda(x, stored, scale, b);
}

torch::Tensor float8GemvBackward(const torch::Tensor& g, const torch::Tensor& stored, const torch::Tensor& scale) {
  TORCH_CHECK(float8GemvFits(g, stored, scale) && g.size(1) == stored.size(0),
              "float8 GEMV backward: g [M <= 4, N] against a contiguous e4m3 weight [N, K] (K a multiple of 16) and a float32 ",
              "scale on the same CUDA device is needed, got g ", g.sizes(), " ", g.scalar_type(), ", weight ", stored.sizes(),
              " ", stored.scalar_type(), ", scale ", scale.sizes());
  return float8GemvBackwardCuda(g, stored, scale);
}

#else

bool float8GemvFits(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&) { return false; }

torch::Tensor float8GemvForward(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, const torch::Tensor&) {
  throw std::runtime_error("float8 GEMV: this build has no CUDA kernels");
}

torch::Tensor float8GemvBackward(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&) {
  throw std::runtime_error("float8 GEMV backward: this build has no CUDA kernels");
}

#endif

}  // namespace sinter::kernels

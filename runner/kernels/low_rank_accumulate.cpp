#include <cstdint>
#include <stdexcept>

#include "kernels/fused_kernels.h"

#if SINTER_WITH_CUDA_KERNELS
#include "kernels/low_rank_accumulate_cuda.h"
#endif

namespace sinter::kernels {

#if SINTER_WITH_CUDA_KERNELS

namespace {

bool aligned32(const torch::Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 32 == 0; }

}  // namespace

bool lowRankAccumulateFits(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b) {
  for (const torch::Tensor* t : {&out, &a, &b})
    if (!t->is_cuda() || t->dim() != 2 || t->scalar_type() != torch::kBFloat16 || t->device() != out.device() || !aligned32(*t))
      return false;
  const int64_t m = out.size(0), n = out.size(1), r = a.size(1);
  if (!out.is_contiguous() || !a.is_contiguous() || a.size(0) != m || b.size(0) != r || b.size(1) != n) return false;
  if (m % 16 != 0 || n % 128 != 0 || (r != 16 && r != 32 && r != 64 && r != 128)) return false;
  // b row-major [R, N], or a contiguous [N, R] transposed.
  return (b.stride(0) == n && b.stride(1) == 1) || (b.stride(0) == 1 && b.stride(1) == r);
}

void lowRankAccumulate(torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b, double alpha) {
  TORCH_CHECK(lowRankAccumulateFits(out, a, b), "low-rank accumulate: bfloat16 CUDA out [M, N] and a [M, R] contiguous, b [R, N] ",
              "row-major or transposed, M a multiple of 16, N of 128, R of 16, 32, 64 or 128, are needed; got out ", out.sizes(),
              " ", out.scalar_type(), ", a ", a.sizes(), " ", a.scalar_type(), ", b ", b.sizes(), " strides ", b.strides(), " ",
              b.scalar_type());
  // The float32 alpha cuBLAS's addmm_ takes from the same double.
  lowRankAccumulateCuda(out, a, b, static_cast<float>(alpha));
}

#else

bool lowRankAccumulateFits(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&) { return false; }

void lowRankAccumulate(torch::Tensor&, const torch::Tensor&, const torch::Tensor&, double) {
  throw std::runtime_error("low-rank accumulate: this build has no CUDA kernels");
}

#endif

}  // namespace sinter::kernels

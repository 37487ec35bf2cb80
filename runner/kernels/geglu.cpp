#include <stdexcept>

#include "kernels/fused_kernels.h"
#include "kernels/geglu_cuda.h"

namespace sinter::kernels {

bool fusedKernelsCompiledIn() { return SINTER_WITH_CUDA_KERNELS != 0; }

#if SINTER_WITH_CUDA_KERNELS

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct GegluFunction : public torch::autograd::Function<GegluFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& projected) {
    const torch::Tensor p = projected.contiguous();
    ctx->save_for_backward({p});
    return gegluForwardCuda(p);
  }
  static variable_list backward(AutogradContext* ctx, variable_list gradOutputs) {
    const torch::Tensor p = ctx->get_saved_variables()[0];
    return {gegluBackwardCuda(p, gradOutputs[0].to(p.scalar_type()).contiguous())};
  }
};

}  // namespace

torch::Tensor geglu(const torch::Tensor& projected) {
  TORCH_CHECK(projected.is_cuda(), "fused GEGLU: a CUDA tensor is needed, not ", projected.device());
  TORCH_CHECK(projected.dim() >= 1 && projected.size(-1) % 2 == 0, "fused GEGLU: the last dimension must be even, got ",
              projected.sizes());
  return GegluFunction::apply(projected);
}

#else

torch::Tensor geglu(const torch::Tensor&) { throw std::runtime_error("fused GEGLU: this build has no CUDA kernels"); }

#endif

}  // namespace sinter::kernels

#include <stdexcept>

#include "kernels/fused_kernels.h"
#include "kernels/group_norm_silu_cuda.h"

namespace sinter::kernels {

#if SINTER_WITH_CUDA_KERNELS

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Keeps x (in its own dtype) and the float32 statistics, where the stock operators keep a float32
// copy of x, the norm's output and SiLU's input. A channels_last x stays so (the NHWC kernels), and
// so do the output and x's gradient.
struct GroupNormSiluFunction : public torch::autograd::Function<GroupNormSiluFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, int64_t groups, double eps, bool silu) {
    const torch::Tensor xc = x.contiguous(groupNormLayout(x));
    const torch::Tensor w = weight.to(torch::kFloat32).contiguous(), b = bias.to(torch::kFloat32).contiguous();
    auto [out, mean, rstd] = groupNormSiluForwardCuda(xc, w, b, groups, eps, silu);
    ctx->save_for_backward({xc, w, b, mean, rstd});
    ctx->saved_data["groups"] = groups;
    ctx->saved_data["silu"] = silu;
    ctx->saved_data["weight_dtype"] = static_cast<int64_t>(weight.scalar_type());
    ctx->saved_data["bias_dtype"] = static_cast<int64_t>(bias.scalar_type());
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list gradOutputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor gradOutput = gradOutputs[0].to(x.scalar_type()).contiguous(groupNormLayout(x));
    auto [gradX, sumDz, sumDzXhat] = groupNormSiluBackwardCuda(gradOutput, x, saved[1], saved[2], saved[3], saved[4],
                                                               ctx->saved_data["groups"].toInt(), ctx->saved_data["silu"].toBool());
    // The affine parameters' gradients: sums over the samples of the per-row sums (frozen in LoRA
    // training, so only made when asked for).
    torch::Tensor gradWeight, gradBias;
    if (ctx->needs_input_grad(1))
      gradWeight = sumDzXhat.sum(0).to(static_cast<torch::ScalarType>(ctx->saved_data["weight_dtype"].toInt()));
    if (ctx->needs_input_grad(2))
      gradBias = sumDz.sum(0).to(static_cast<torch::ScalarType>(ctx->saved_data["bias_dtype"].toInt()));
    return {gradX, gradWeight, gradBias, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

torch::Tensor applyGroupNorm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, int64_t groups,
                             double eps, bool silu) {
  const char* what = silu ? "fused GroupNorm+SiLU" : "fused GroupNorm";
  TORCH_CHECK(x.is_cuda(), what, ": a CUDA tensor is needed, not ", x.device());
  TORCH_CHECK(x.dim() >= 2 && groups > 0 && x.size(1) % groups == 0 && weight.numel() == x.size(1) &&
                  bias.numel() == x.size(1),
              what, ": input ", x.sizes(), " with ", groups, " groups and ", weight.numel(), " weights");
  return GroupNormSiluFunction::apply(x, weight, bias, groups, eps, silu);
}

}  // namespace

torch::Tensor groupNormSilu(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, int64_t groups,
                            double eps) {
  return applyGroupNorm(x, weight, bias, groups, eps, /*silu=*/true);
}

torch::Tensor groupNorm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, int64_t groups,
                        double eps) {
  return applyGroupNorm(x, weight, bias, groups, eps, /*silu=*/false);
}

#else

torch::Tensor groupNormSilu(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, int64_t, double) {
  throw std::runtime_error("fused GroupNorm+SiLU: this build has no CUDA kernels");
}

torch::Tensor groupNorm(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, int64_t, double) {
  throw std::runtime_error("fused GroupNorm: this build has no CUDA kernels");
}

#endif

}  // namespace sinter::kernels

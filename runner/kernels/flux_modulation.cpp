#include <ATen/ExpandUtils.h>

#include <stdexcept>

#include "kernels/flux_modulation_cuda.h"
#include "kernels/fused_kernels.h"
#include "kernels/shared_gradient.h"
#include "kernels/vector_alignment.h"

namespace sinter::kernels {

#if SINTER_WITH_CUDA_KERNELS

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Rows the kernels can read with vector loads: [B, L, C] (or [B, 1, C] vectors) with contiguous
// channels, rows at one stride, and pointer and strides on the vector size.
bool loadableRows(const torch::Tensor& t) {
  return t.dim() == 3 && t.stride(2) == 1 && (t.size(1) == 1 || t.stride(0) == t.size(1) * t.stride(1)) &&
         vectorAligned(t, {t.stride(0), t.stride(1)});
}

torch::Tensor loadable(const torch::Tensor& t) { return loadableRows(t) ? t : t.contiguous(); }

RowsGeometry geometryOf(const torch::Tensor& x, const torch::Tensor& modulation) {
  return RowsGeometry{x.size(0), x.size(1), x.size(2), modulation.size(0) == 1 ? 0 : modulation.stride(0)};
}

// A [B, 1, C] vector's gradient from the kernels' float32 [B, C] sums.
torch::Tensor vectorGradient(const torch::Tensor& sums, const torch::Tensor& like) {
  return at::sum_to(sums.unsqueeze(1).to(like.scalar_type()), like.sizes());
}

struct LayerNormModulateFunction : public torch::autograd::Function<LayerNormModulateFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& shift, const torch::Tensor& scale,
                               double eps) {
    const torch::Tensor xc = x.contiguous();
    torch::Tensor sh = loadable(shift.to(x.scalar_type())), sc = loadable(scale.to(x.scalar_type()));
    // The kernels take one batch stride for both vectors (chunks of one Linear's output share it).
    if (sc.size(0) > 1 && sh.stride(0) != sc.stride(0)) {
      sh = sh.contiguous();
      sc = sc.contiguous();
    }
    const RowsGeometry g = geometryOf(xc, sc);
    std::vector<torch::Tensor> out = layerNormModulateForwardCuda(xc, sh, sc, g, eps);
    ctx->save_for_backward({xc, sc, out[1], out[2], shift, scale});
    return out[0];
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &sc = saved[1], &mean = saved[2], &rstd = saved[3];
    const torch::Tensor gradOut = grads[0].to(x.scalar_type()).contiguous();
    const std::vector<torch::Tensor> d = layerNormModulateBackwardCuda(x, sc, mean, rstd, gradOut, geometryOf(x, sc));
    return {d[0], vectorGradient(d[1].select(1, 1), saved[4]), vectorGradient(d[1].select(1, 0), saved[5]), torch::Tensor()};
  }
};

struct GatedResidualFunction : public torch::autograd::Function<GatedResidualFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& residual, const torch::Tensor& gate,
                               const torch::Tensor& y) {
    const torch::Tensor r = residual.contiguous(), yc = y.to(residual.scalar_type()).contiguous();
    const torch::Tensor gt = loadable(gate.to(residual.scalar_type()));
    ctx->save_for_backward({gt, yc, gate});
    return gatedResidualForwardCuda(r, gt, yc, geometryOf(r, gt));
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &gt = saved[0], &y = saved[1];
    const torch::Tensor gradOut = grads[0].to(y.scalar_type()).contiguous();
    const std::vector<torch::Tensor> d = gatedResidualBackwardCuda(gt, y, gradOut, geometryOf(y, gt));
    return {gradOut, vectorGradient(d[1], saved[2]), d[0]};
  }
};

struct AttentionGeluJoinFunction : public torch::autograd::Function<AttentionGeluJoinFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& attended, const torch::Tensor& mlp,
                               const GradientInto& into) {
    const int64_t b = mlp.size(0), l = mlp.size(1), m = mlp.size(2), hd = attended.numel() / (b * l);
    torch::Tensor joined = torch::empty({b, l, hd + m}, mlp.options());
    // The attention's output is token-major (a view where the fused QK kernel laid out q, k and v).
    torch::Tensor joinedAttended = joined.narrow(2, 0, hd);
    copyRowsCuda(loadable(attended.reshape({b, l, hd})), joinedAttended);
    const torch::Tensor in = loadable(mlp);
    torch::Tensor activated = joined.narrow(2, hd, m);
    geluTanhRowsCuda(in, torch::Tensor(), activated);
    ctx->save_for_backward({in});
    ctx->saved_data["attended_sizes"] = attended.sizes().vec();
    keepGradientInto(ctx, into);
    return joined;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const torch::Tensor in = ctx->get_saved_variables()[0];
    const std::vector<int64_t> attendedSizes = ctx->saved_data["attended_sizes"].toIntVector();
    const torch::Tensor gradJoined = loadable(grads[0].to(in.scalar_type()));
    const int64_t m = in.size(2), hd = gradJoined.size(2) - m;
    // Dense, as the attention's output is laid out: cuDNN's backward pass reads the output gradient
    // with the output's strides (a column range of gradJoined has rows 4.5x as far apart).
    torch::Tensor gradAttended = torch::empty({in.size(0), in.size(1), hd}, in.options());
    copyRowsCuda(gradJoined.narrow(2, 0, hd), gradAttended);
    torch::Tensor gradMlp = gradientInto(ctx, in);
    TORCH_CHECK(gradMlp.sizes() == in.sizes() && loadableRows(gradMlp), "fused attention+GELU join: the gradient's "
                "destination ", gradMlp.sizes(), " strides ", gradMlp.strides(), " is not rows of mlp's shape ", in.sizes());
    geluTanhRowsCuda(in, gradJoined.narrow(2, hd, m), gradMlp);
    return {gradAttended.view(attendedSizes), gradMlp, torch::Tensor()};
  }
};

void checkRows(const char* what, const torch::Tensor& x, const torch::Tensor& vector) {
  TORCH_CHECK(x.is_cuda(), what, ": a CUDA tensor is needed, not ", x.device());
  TORCH_CHECK(fluxRowsFitKernels(x), what, ": x must be [B, L, C] with C a multiple of ", kVec,
              " up to 4096, got ", x.sizes());
  TORCH_CHECK(vector.dim() == 3 && vector.size(1) == 1 && vector.size(2) == x.size(2) &&
                  (vector.size(0) == x.size(0) || vector.size(0) == 1),
              what, ": the modulation vector must be [B, 1, C] for x ", x.sizes(), ", got ", vector.sizes());
}

}  // namespace

bool fluxRowsFitKernels(const torch::Tensor& x) {
  return x.dim() == 3 && rowsKernelsFit(x.size(2)) &&
         (x.scalar_type() == torch::kFloat32 || x.scalar_type() == torch::kFloat16 || x.scalar_type() == torch::kBFloat16);
}

torch::Tensor fluxLayerNormModulate(const torch::Tensor& x, const torch::Tensor& shift, const torch::Tensor& scale, double eps) {
  checkRows("fused LayerNorm+modulate", x, shift);
  checkRows("fused LayerNorm+modulate", x, scale);
  return LayerNormModulateFunction::apply(x, shift, scale, eps);
}

torch::Tensor fluxGatedResidual(const torch::Tensor& residual, const torch::Tensor& gate, const torch::Tensor& y) {
  checkRows("fused gated residual", residual, gate);
  TORCH_CHECK(y.sizes() == residual.sizes(), "fused gated residual: y ", y.sizes(), " is not the residual's ", residual.sizes());
  return GatedResidualFunction::apply(residual, gate, y);
}

torch::Tensor fluxAttentionGeluJoin(const torch::Tensor& attended, const torch::Tensor& mlp, const GradientInto& into) {
  TORCH_CHECK(mlp.is_cuda() && attended.is_cuda(), "fused attention+GELU join: CUDA tensors are needed");
  TORCH_CHECK(mlp.dim() == 3 && mlp.size(2) % kVec == 0 && attended.dim() >= 3 &&
                  attended.size(0) == mlp.size(0) && attended.size(1) == mlp.size(1),
              "fused attention+GELU join: attended [B, L, ...] and mlp [B, L, M] (M a multiple of ", kVec,
              ") do not fit: ", attended.sizes(), " and ", mlp.sizes());
  const int64_t hd = attended.numel() / std::max<int64_t>(1, mlp.size(0) * mlp.size(1));
  TORCH_CHECK(hd % kVec == 0, "fused attention+GELU join: the attended width ", hd, " is not a multiple of ",
              kVec);
  return AttentionGeluJoinFunction::apply(attended, mlp.to(attended.scalar_type()), into);
}

#else

bool fluxRowsFitKernels(const torch::Tensor&) { return false; }
torch::Tensor fluxLayerNormModulate(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, double) {
  throw std::runtime_error("fused LayerNorm+modulate: this build has no CUDA kernels");
}
torch::Tensor fluxGatedResidual(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&) {
  throw std::runtime_error("fused gated residual: this build has no CUDA kernels");
}
torch::Tensor fluxAttentionGeluJoin(const torch::Tensor&, const torch::Tensor&, const GradientInto&) {
  throw std::runtime_error("fused attention+GELU join: this build has no CUDA kernels");
}

#endif

}  // namespace sinter::kernels

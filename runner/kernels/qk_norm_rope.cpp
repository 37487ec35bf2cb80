#include <stdexcept>

#include "kernels/fused_kernels.h"
#include "kernels/qk_norm_rope_cuda.h"
#include "kernels/shared_gradient.h"

namespace sinter::kernels {

bool qkNormRopeFits(int64_t headDim) { return headDim > 0 && headDim % 4 == 0 && headDim <= 256; }

#if SINTER_WITH_CUDA_KERNELS

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// [B, L, 3HD] -> part p of it as [B, L, H, D].
torch::Tensor partOf(const torch::Tensor& qkv, int64_t part, int64_t heads) {
  const int64_t hd = qkv.size(2) / 3;
  return qkv.narrow(2, part * hd, hd).reshape({qkv.size(0), qkv.size(1), heads, hd / heads});
}

// The scales' gradient by stock operators (they train only in a full fine-tune): sum over rows of
// d n * y, where d n is the transpose rotation of d out and y = x / rms.
torch::Tensor scaleGradient(const torch::Tensor& x, const torch::Tensor& rrms, const torch::Tensor& rotations,
                            const torch::Tensor& gradOut) {
  const torch::Tensor y = x.to(torch::kFloat32) * rrms.unsqueeze(-1);                // [B, L, H, D]
  const torch::Tensor g = gradOut.permute({0, 2, 1, 3}).to(torch::kFloat32);          // [B, L, H, D]
  std::vector<int64_t> pairs = g.sizes().vec();
  pairs.back() /= 2;
  pairs.push_back(2);
  const torch::Tensor r = rotations.squeeze(1).unsqueeze(2);                          // [Br, L, 1, D/2, 2, 2]
  const torch::Tensor dn = (r * g.reshape(pairs).unsqueeze(-1)).sum(-2).reshape(g.sizes());  // sum over the output index
  return (dn * y).sum({0, 1, 2});
}

struct QkNormRopeFunction : public torch::autograd::Function<QkNormRopeFunction> {
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& qkv, const torch::Tensor& qScale,
                               const torch::Tensor& kScale, const torch::Tensor& rotations, int64_t heads,
                               const GradientInto& into, double eps) {
    const torch::Tensor q32 = qScale.to(torch::kFloat32).contiguous(), k32 = kScale.to(torch::kFloat32).contiguous();
    // A stream's slice of the joint sequence's rotations is used in place: the kernels take its
    // batch and token strides, and need only each token's D/2 matrices packed.
    const bool packed = rotations.scalar_type() == torch::kFloat32 && rotations.stride(5) == 1 && rotations.stride(4) == 2 &&
                        rotations.stride(3) == 4;
    const torch::Tensor rot = packed ? rotations : rotations.to(torch::kFloat32).contiguous();
    std::vector<torch::Tensor> out = qkNormRopeForwardCuda(qkv, q32, k32, rot, heads, eps);  // q, k, v, 1 / rms
    ctx->save_for_backward({qkv, q32, k32, rot, out[3]});
    ctx->saved_data["heads"] = heads;
    keepGradientInto(ctx, into);
    return {out[0], out[1], out[2]};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &qkv = saved[0], &q32 = saved[1], &k32 = saved[2], &rot = saved[3], &rrms = saved[4];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const int64_t b = qkv.size(0), l = qkv.size(1), d = q32.size(0);
    // Read where they are (the kernel takes their strides); an unused output's gradient is zeros.
    auto gradOrZeros = [&](const torch::Tensor& g) {
      return g.defined() ? g.to(qkv.scalar_type()) : torch::zeros({b, heads, l, d}, qkv.options());
    };
    const torch::Tensor gq = gradOrZeros(grads[0]), gk = gradOrZeros(grads[1]);
    const torch::Tensor gradQkv = gradientInto(ctx, qkv);
    qkNormRopeBackwardCuda(qkv, q32, k32, rot, rrms, gq, gk, gradOrZeros(grads[2]), heads, gradQkv);
    torch::Tensor gradQScale, gradKScale;
    if (ctx->needs_input_grad(1)) gradQScale = scaleGradient(partOf(qkv, 0, heads), rrms[0], rot, gq);
    if (ctx->needs_input_grad(2)) gradKScale = scaleGradient(partOf(qkv, 1, heads), rrms[1], rot, gk);
    return {gradQkv, gradQScale, gradKScale, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

std::vector<torch::Tensor> fluxQkNormRope(const torch::Tensor& qkv, const torch::Tensor& qScale, const torch::Tensor& kScale,
                                          const torch::Tensor& rotations, int64_t heads, const GradientInto& into,
                                          double eps) {
  TORCH_CHECK(qkv.is_cuda(), "fused QK norm + RoPE: a CUDA tensor is needed, not ", qkv.device());
  TORCH_CHECK(qkv.dim() == 3 && qkv.stride(2) == 1, "fused QK norm + RoPE: qkv must be [B, L, 3HD] with a contiguous last "
              "dimension, got ", qkv.sizes(), " strides ", qkv.strides());
  const int64_t d = qScale.size(0);
  TORCH_CHECK(qkNormRopeFits(d), "fused QK norm + RoPE: heads of ", d, " channels (a multiple of 4 up to 256 is needed)");
  TORCH_CHECK(qkv.size(2) == 3 * heads * d && kScale.size(0) == d,
              "fused QK norm + RoPE: qkv's last dimension ", qkv.size(2), " is not 3 x ", heads, " heads x ", d);
  TORCH_CHECK(rotations.dim() == 6 && rotations.size(2) == qkv.size(1) && rotations.size(3) == d / 2 &&
                  (rotations.size(0) == 1 || rotations.size(0) == qkv.size(0)),
              "fused QK norm + RoPE: rotations ", rotations.sizes(), " do not fit qkv ", qkv.sizes());
  return QkNormRopeFunction::apply(qkv, qScale, kScale, rotations, heads, into, eps);
}

#else

std::vector<torch::Tensor> fluxQkNormRope(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                                          int64_t, const GradientInto&, double) {
  throw std::runtime_error("fused QK norm + RoPE: this build has no CUDA kernels");
}

#endif

}  // namespace sinter::kernels

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

// q, k and v of `length` tokens as [B, H, L, D] laid out token-major in memory ([B, L, H, D]), so the
// attention's output comes back token-major and its move to [B, L, H * D] is a view, not a copy.
std::vector<torch::Tensor> tokenMajorOutputs(const torch::Tensor& qkv, int64_t length, int64_t heads, int64_t dim) {
  std::vector<torch::Tensor> out;
  for (int i = 0; i < 3; ++i)
    out.push_back(torch::empty_strided({qkv.size(0), heads, length, dim}, {length * heads * dim, dim, heads * dim, 1},
                                       qkv.options()));
  return out;
}

// The rotations as the kernels take them: a stream's slice of the joint sequence's is used in place
// (the kernels take its batch and token strides, and need only each token's D/2 matrices packed).
torch::Tensor packedRotations(const torch::Tensor& rotations) {
  const bool packed = rotations.scalar_type() == torch::kFloat32 && rotations.stride(5) == 1 && rotations.stride(4) == 2 &&
                      rotations.stride(3) == 4;
  return packed ? rotations : rotations.to(torch::kFloat32).contiguous();
}

torch::Tensor float32Scale(const torch::Tensor& scale) { return scale.to(torch::kFloat32).contiguous(); }

// One stream's forward pass: q, k and v written into rows [start, start + L) of the outputs (the
// joint sequence's, or the stream's own); returns its rows' 1 / rms.
torch::Tensor forwardStream(const torch::Tensor& qkv, const torch::Tensor& q32, const torch::Tensor& k32,
                            const torch::Tensor& rot, int64_t heads, double eps, const std::vector<torch::Tensor>& out,
                            int64_t start) {
  const int64_t length = qkv.size(1);
  return qkNormRopeForwardCuda(qkv, q32, k32, rot.narrow(2, start, length), heads, eps, out[0].narrow(2, start, length),
                               out[1].narrow(2, start, length), out[2].narrow(2, start, length));
}

// One stream's backward pass from the outputs' gradients (read at rows [start, start + L)): d qkv
// into gradQkv, and the scales' gradients where they train. Returns {d qkv, d q scale, d k scale}.
variable_list backwardStream(const torch::Tensor& qkv, const torch::Tensor& q32, const torch::Tensor& k32,
                             const torch::Tensor& rot, const torch::Tensor& rrms, int64_t heads,
                             const std::vector<torch::Tensor>& grads, int64_t start, const torch::Tensor& gradQkv,
                             bool needQScale, bool needKScale) {
  const int64_t length = qkv.size(1);
  const torch::Tensor gq = grads[0].narrow(2, start, length), gk = grads[1].narrow(2, start, length);
  const torch::Tensor sRot = rot.narrow(2, start, length);
  qkNormRopeBackwardCuda(qkv, q32, k32, sRot, rrms, gq, gk, grads[2].narrow(2, start, length), heads, gradQkv);
  torch::Tensor gradQScale, gradKScale;
  if (needQScale) gradQScale = scaleGradient(partOf(qkv, 0, heads), rrms[0], sRot, gq);
  if (needKScale) gradKScale = scaleGradient(partOf(qkv, 1, heads), rrms[1], sRot, gk);
  return {gradQkv, gradQScale, gradKScale};
}

// The outputs' gradients as the kernels read them: where they are (the kernel takes their strides),
// in qkv's dtype; an unused output's gradient is zeros.
std::vector<torch::Tensor> incomingGradients(const variable_list& grads, const torch::Tensor& qkv, int64_t heads, int64_t length,
                                             int64_t dim) {
  std::vector<torch::Tensor> out;
  for (int i = 0; i < 3; ++i)
    out.push_back(grads[i].defined() ? grads[i].to(qkv.scalar_type())
                                     : torch::zeros({qkv.size(0), heads, length, dim}, qkv.options()));
  return out;
}

struct QkNormRopeFunction : public torch::autograd::Function<QkNormRopeFunction> {
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& qkv, const torch::Tensor& qScale,
                               const torch::Tensor& kScale, const torch::Tensor& rotations, int64_t heads,
                               const GradientInto& into, double eps) {
    const torch::Tensor q32 = float32Scale(qScale), k32 = float32Scale(kScale), rot = packedRotations(rotations);
    const std::vector<torch::Tensor> out = tokenMajorOutputs(qkv, qkv.size(1), heads, q32.size(0));
    const torch::Tensor rrms = forwardStream(qkv, q32, k32, rot, heads, eps, out, 0);
    ctx->save_for_backward({qkv, q32, k32, rot, rrms});
    ctx->saved_data["heads"] = heads;
    keepGradientInto(ctx, into);
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &qkv = saved[0], &q32 = saved[1], &k32 = saved[2], &rot = saved[3], &rrms = saved[4];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const std::vector<torch::Tensor> incoming = incomingGradients(grads, qkv, heads, qkv.size(1), q32.size(0));
    const variable_list d = backwardStream(qkv, q32, k32, rot, rrms, heads, incoming, 0, gradientInto(ctx, qkv),
                                           ctx->needs_input_grad(1), ctx->needs_input_grad(2));
    return {d[0], d[1], d[2], torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// Streams a and b side by side along the outputs' sequence; rotations are the joint sequence's.
struct JointQkNormRopeFunction : public torch::autograd::Function<JointQkNormRopeFunction> {
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& qkvA, const torch::Tensor& qScaleA,
                               const torch::Tensor& kScaleA, const torch::Tensor& qkvB, const torch::Tensor& qScaleB,
                               const torch::Tensor& kScaleB, const torch::Tensor& rotations, int64_t heads, double eps) {
    const torch::Tensor qa = float32Scale(qScaleA), ka = float32Scale(kScaleA), qb = float32Scale(qScaleB),
                        kb = float32Scale(kScaleB), rot = packedRotations(rotations);
    const std::vector<torch::Tensor> out = tokenMajorOutputs(qkvA, qkvA.size(1) + qkvB.size(1), heads, qa.size(0));
    const torch::Tensor rrmsA = forwardStream(qkvA, qa, ka, rot, heads, eps, out, 0);
    const torch::Tensor rrmsB = forwardStream(qkvB, qb, kb, rot, heads, eps, out, qkvA.size(1));
    ctx->save_for_backward({qkvA, qa, ka, rrmsA, qkvB, qb, kb, rrmsB, rot});
    ctx->saved_data["heads"] = heads;
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &qkvA = saved[0], &qkvB = saved[4], &rot = saved[8];
    const int64_t heads = ctx->saved_data["heads"].toInt(), la = qkvA.size(1);
    const std::vector<torch::Tensor> incoming = incomingGradients(grads, qkvA, heads, la + qkvB.size(1), saved[1].size(0));
    variable_list result;
    for (int s = 0; s < 2; ++s) {
      const torch::Tensor& qkv = saved[4 * s];
      const variable_list d = backwardStream(qkv, saved[4 * s + 1], saved[4 * s + 2], rot, saved[4 * s + 3], heads, incoming,
                                             s == 0 ? 0 : la, torch::empty(qkv.sizes(), qkv.options()),
                                             ctx->needs_input_grad(3 * s + 1), ctx->needs_input_grad(3 * s + 2));
      result.insert(result.end(), d.begin(), d.end());
    }
    result.insert(result.end(), {torch::Tensor(), torch::Tensor(), torch::Tensor()});  // rotations, heads, eps
    return result;
  }
};

void checkStream(const torch::Tensor& qkv, const torch::Tensor& qScale, const torch::Tensor& kScale, int64_t heads) {
  TORCH_CHECK(qkv.is_cuda(), "fused QK norm + RoPE: a CUDA tensor is needed, not ", qkv.device());
  TORCH_CHECK(qkv.dim() == 3 && qkv.stride(2) == 1, "fused QK norm + RoPE: qkv must be [B, L, 3HD] with a contiguous last "
              "dimension, got ", qkv.sizes(), " strides ", qkv.strides());
  const int64_t d = qScale.size(0);
  TORCH_CHECK(qkNormRopeFits(d), "fused QK norm + RoPE: heads of ", d, " channels (a multiple of 4 up to 256 is needed)");
  TORCH_CHECK(qkv.size(2) == 3 * heads * d && kScale.size(0) == d,
              "fused QK norm + RoPE: qkv's last dimension ", qkv.size(2), " is not 3 x ", heads, " heads x ", d);
}

void checkRotations(const torch::Tensor& rotations, int64_t batch, int64_t length, int64_t d) {
  TORCH_CHECK(rotations.dim() == 6 && rotations.size(2) == length && rotations.size(3) == d / 2 &&
                  (rotations.size(0) == 1 || rotations.size(0) == batch),
              "fused QK norm + RoPE: rotations ", rotations.sizes(), " do not fit ", batch, " x ", length,
              " tokens of heads of ", d);
}

}  // namespace

std::vector<torch::Tensor> fluxQkNormRope(const torch::Tensor& qkv, const torch::Tensor& qScale, const torch::Tensor& kScale,
                                          const torch::Tensor& rotations, int64_t heads, const GradientInto& into,
                                          double eps) {
  checkStream(qkv, qScale, kScale, heads);
  checkRotations(rotations, qkv.size(0), qkv.size(1), qScale.size(0));
  return QkNormRopeFunction::apply(qkv, qScale, kScale, rotations, heads, into, eps);
}

std::vector<torch::Tensor> fluxJointQkNormRope(const torch::Tensor& qkvA, const torch::Tensor& qScaleA,
                                               const torch::Tensor& kScaleA, const torch::Tensor& qkvB,
                                               const torch::Tensor& qScaleB, const torch::Tensor& kScaleB,
                                               const torch::Tensor& rotations, int64_t heads, double eps) {
  checkStream(qkvA, qScaleA, kScaleA, heads);
  checkStream(qkvB, qScaleB, kScaleB, heads);
  TORCH_CHECK(qkvB.size(0) == qkvA.size(0) && qkvB.size(2) == qkvA.size(2) && qScaleB.size(0) == qScaleA.size(0) &&
                  qkvB.scalar_type() == qkvA.scalar_type(),
              "fused QK norm + RoPE: the two streams ", qkvA.sizes(), " and ", qkvB.sizes(), " differ in batch, width or dtype");
  checkRotations(rotations, qkvA.size(0), qkvA.size(1) + qkvB.size(1), qScaleA.size(0));
  return JointQkNormRopeFunction::apply(qkvA, qScaleA, kScaleA, qkvB, qScaleB, kScaleB, rotations, heads, eps);
}

#else

std::vector<torch::Tensor> fluxQkNormRope(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                                          int64_t, const GradientInto&, double) {
  throw std::runtime_error("fused QK norm + RoPE: this build has no CUDA kernels");
}

std::vector<torch::Tensor> fluxJointQkNormRope(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                                               const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                                               const torch::Tensor&, int64_t, double) {
  throw std::runtime_error("fused QK norm + RoPE: this build has no CUDA kernels");
}

#endif

}  // namespace sinter::kernels

#include "models/adapters/frozen_linear_lora.h"

#include "models/adapters/lora_products.h"

namespace sinter::models {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// A served weight (fp8_base, blocks_to_swap) rides in an autograd context's saved_data as a capsule:
// the backward pass asks it for the weight again rather than keeping the upcast or streamed copy.
struct ServedWeightCapsule : torch::CustomClassHolder {
  explicit ServedWeightCapsule(std::shared_ptr<ServedWeight> w) : weight(std::move(w)) {}
  std::shared_ptr<ServedWeight> weight;
};

struct FrozenLinearWithLora : public torch::autograd::Function<FrozenLinearWithLora> {
  // The bias as an optional: autograd tracks an optional argument only when it holds a tensor.
  // `stored`: the module's weight; with `served` set, its stored form (float8, or host memory),
  // and the weight used is served->get() in the activations' dtype, in each pass.
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& stored,
                               const c10::optional<torch::Tensor>& bias, const torch::Tensor& down, const torch::Tensor& up,
                               double alpha, const std::shared_ptr<ServedWeight>& served) {
    // fp8_fast: the base product on FP8 tensor cores from the stored form (no upcast weight).
    const torch::Tensor x2 = x.view({-1, x.size(-1)});
    const bool products = served && served->computesProducts(x2.size(0));
    const torch::Tensor weight = products ? stored : served ? served->get(x.scalar_type()) : stored;
    const torch::Tensor h = torch::mm(x2, down.t());  // [N, rank]
    torch::Tensor y;
    if (products) {
      // The FP8 GEMM writes y (with the bias in its epilogue); the skinny up projection adds into it.
      y = served->forwardProduct(x2, bias ? *bias : torch::Tensor());
      y.addmm_(h, up.t(), /*beta=*/1.0, alpha);
    } else {
      // The skinny up projection first (it only writes y), then the base GEMM adds into it: the
      // base GEMM is compute-bound, so reading y in its epilogue is free, where the other order
      // reads and rewrites y in a memory-bound GEMM of its own.
      y = bias ? torch::addmm(*bias, h, up.t(), /*beta=*/1.0, alpha) : scaledProduct(h, up.t(), alpha);
      y.addmm_(x2, weight.t());
    }
    ctx->save_for_backward({x2, h, served ? torch::Tensor() : weight, down, up});
    ctx->saved_data["out_features"] = weight.size(0);
    if (served) ctx->saved_data["served"] = c10::IValue::make_capsule(c10::make_intrusive<ServedWeightCapsule>(served));
    ctx->saved_data["alpha"] = alpha;
    // Which gradients to make: by the inputs themselves, as needs_input_grad counts only the
    // arguments autograd tracks (the bias is one only where it is given).
    ctx->saved_data["wanted"] = std::vector<bool>{x.requires_grad(), down.requires_grad(), up.requires_grad()};
    std::vector<int64_t> outSizes = x.sizes().vec();
    outSizes.back() = weight.size(0);
    ctx->saved_data["x_sizes"] = x.sizes().vec();
    return at::_unsafe_view(y, outSizes);  // not a view to autograd: callers may write into it
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &x2 = saved[0], &h = saved[1], &down = saved[3], &up = saved[4];
    const auto served = ctx->saved_data.find("served");
    const std::shared_ptr<ServedWeight> servedWeight =
        served == ctx->saved_data.end()
            ? nullptr
            : c10::static_intrusive_pointer_cast<ServedWeightCapsule>(served->second.toCapsule())->weight;
    const bool products = servedWeight && servedWeight->computesProducts(x2.size(0));
    const double alpha = ctx->saved_data["alpha"].toDouble();
    const torch::Tensor g = grads[0].reshape({-1, ctx->saved_data["out_features"].toInt()});  // [N, out]
    const c10::List<bool> wanted = ctx->saved_data["wanted"].toBoolList();
    const bool wantX = wanted[0], wantDown = wanted[1], wantUp = wanted[2];
    torch::Tensor dx, dDown, dUp;
    if (wantX || wantDown) {
      const torch::Tensor dh = scaledProduct(g, up, alpha);  // [N, rank]: alpha g U
      if (wantX && products) {
        // fp8_fast: the FP8 GEMM writes dx (it cannot accumulate), the skinny product adds into it.
        dx = at::_unsafe_view(servedWeight->backwardProduct(g.contiguous()).addmm_(dh, down),
                              ctx->saved_data["x_sizes"].toIntVector());
      } else if (wantX) {
        // As in forward: the skinny product written first, the base GEMM accumulating into it.
        const torch::Tensor weight = servedWeight ? servedWeight->get(x2.scalar_type()) : saved[2];
        dx = at::_unsafe_view(torch::mm(dh, down).addmm_(g, weight), ctx->saved_data["x_sizes"].toIntVector());
      }
      if (wantDown) {
        const torch::Tensor kept = keptGradient(down);
        if (kept.defined()) kept.addmm_(dh.t(), x2);  // dDown stays undefined: it is in the buffer
        else dDown = torch::mm(dh.t(), x2);
      }
    }
    if (wantUp) {
      const torch::Tensor kept = keptGradient(up);
      if (kept.defined()) kept.addmm_(g.t(), h, /*beta=*/1.0, alpha);
      else dUp = scaledProduct(g.t(), h, alpha);
    }
    return {dx, torch::Tensor(), torch::Tensor(), dDown, dUp, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor frozenLinearWithLora(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                   const torch::Tensor& down, const torch::Tensor& up, double alpha,
                                   const std::shared_ptr<ServedWeight>& served) {
  TORCH_CHECK(x.is_contiguous() && (x.dim() == 2 || x.dim() == 3), "frozenLinearWithLora: x must be a contiguous [N, in] or "
              "[B, L, in], got ", x.sizes(), " strides ", x.strides());
  TORCH_CHECK(!weight.requires_grad() && !(bias.defined() && bias.requires_grad()) && !(served && served->trained()),
              "frozenLinearWithLora: the base weight and bias must be frozen");
  return FrozenLinearWithLora::apply(x, weight, bias.defined() ? c10::optional<torch::Tensor>(bias) : c10::nullopt, down, up,
                                     alpha, served);
}

}  // namespace sinter::models

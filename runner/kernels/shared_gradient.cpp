#include "kernels/shared_gradient.h"

#include <numeric>

namespace sinter::kernels {

SharedGradient::SharedGradient(std::vector<int64_t> sizes, std::vector<int64_t> widths, torch::TensorOptions options)
    : sizes_(std::move(sizes)), widths_(std::move(widths)), options_(options) {}

torch::Tensor SharedGradient::columns(const torch::Tensor& whole, size_t i) const {
  const int64_t offset = std::accumulate(widths_.begin(), widths_.begin() + static_cast<std::ptrdiff_t>(i), int64_t{0});
  return whole.narrow(-1, offset, widths_.at(i));
}

torch::Tensor SharedGradient::part(size_t i) {
  if (!whole_.defined()) whole_ = torch::empty(sizes_, options_);
  return columns(whole_, i);
}

torch::Tensor SharedGradient::assemble(const std::vector<torch::Tensor>& partGradients) {
  TORCH_CHECK(partGradients.size() == widths_.size(), "shared gradient: ", partGradients.size(), " part gradients for ",
              widths_.size(), " parts");
  torch::Tensor whole = whole_.defined() ? whole_ : torch::empty(sizes_, options_);
  whole_ = torch::Tensor();
  for (size_t i = 0; i < widths_.size(); ++i) {
    torch::Tensor into = columns(whole, i);
    const torch::Tensor& g = partGradients[i];
    if (!g.defined()) into.zero_();
    // A part its consumer wrote in place needs nothing; any other is copied (the concatenation).
    else if (!(g.data_ptr() == into.data_ptr() && g.sizes() == into.sizes() && g.strides() == into.strides()))
      into.copy_(g);
  }
  return whole;
}

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// A SharedGradient rides in an autograd context's saved_data as a capsule (no registered class needed).
c10::IValue sharedGradientValue(const c10::intrusive_ptr<SharedGradient>& gradient) {
  return gradient ? c10::IValue::make_capsule(gradient) : c10::IValue();
}

c10::intrusive_ptr<SharedGradient> sharedGradientOf(const c10::IValue& value) {
  return value.isCapsule() ? c10::static_intrusive_pointer_cast<SharedGradient>(value.toCapsule())
                           : c10::intrusive_ptr<SharedGradient>();
}

struct SplitSharingGradientFunction : public torch::autograd::Function<SplitSharingGradientFunction> {
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& y, const c10::intrusive_ptr<SharedGradient>& gradient,
                               const std::vector<int64_t>& widths) {
    ctx->saved_data["gradient"] = sharedGradientValue(gradient);
    variable_list parts;
    int64_t offset = 0;
    for (int64_t w : widths) {
      parts.push_back(y.narrow(-1, offset, w));
      offset += w;
    }
    return parts;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {sharedGradientOf(ctx->saved_data["gradient"])->assemble(grads), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

SplitSharingGradient splitSharingGradient(const torch::Tensor& y, const std::vector<int64_t>& widths) {
  TORCH_CHECK(y.dim() >= 1 && std::accumulate(widths.begin(), widths.end(), int64_t{0}) == y.size(-1),
              "splitSharingGradient: widths do not sum to the last dimension of ", y.sizes());
  auto gradient = c10::make_intrusive<SharedGradient>(y.sizes().vec(), widths, y.options());
  return {SplitSharingGradientFunction::apply(y, gradient, widths), gradient};
}

void keepGradientInto(AutogradContext* ctx, const GradientInto& into) {
  TORCH_CHECK(!into.shared || (into.part >= 0 && static_cast<size_t>(into.part) < into.shared->parts()),
              "shared gradient: no part ", into.part, " in a split of ", into.shared ? into.shared->parts() : 0, " parts");
  ctx->saved_data["gradient_into"] = sharedGradientValue(into.shared);
  ctx->saved_data["gradient_into_part"] = into.part;
}

torch::Tensor gradientInto(AutogradContext* ctx, const torch::Tensor& input) {
  const c10::intrusive_ptr<SharedGradient> shared = sharedGradientOf(ctx->saved_data["gradient_into"]);
  return shared ? shared->part(static_cast<size_t>(ctx->saved_data["gradient_into_part"].toInt()))
                : torch::empty(input.sizes(), input.options());
}

}  // namespace sinter::kernels

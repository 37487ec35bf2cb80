#include "models/adapters/frozen_joint_linear_lora.h"

#include "models/adapters/lora_products.h"

namespace sinter::models {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Where each part's columns start in a side-by-side tensor of the given widths.
std::vector<int64_t> offsetsOf(const std::vector<int64_t>& widths) {
  std::vector<int64_t> offsets;
  int64_t at = 0;
  for (int64_t w : widths) {
    offsets.push_back(at);
    at += w;
  }
  return offsets;
}

struct FrozenJointLinearWithLora : public torch::autograd::Function<FrozenJointLinearWithLora> {
  // `adapters`: down_1, up_1, down_2, up_2, ... (a tensor list, each one an input autograd tracks).
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               at::TensorList adapters, const std::vector<double>& alphas) {
    const size_t parts = alphas.size();
    const torch::Tensor x2 = x.view({-1, x.size(-1)});
    std::vector<torch::Tensor> downs, ups;
    std::vector<int64_t> ranks, widths;
    for (size_t i = 0; i < parts; ++i) {
      downs.push_back(adapters[2 * i]);
      ups.push_back(adapters[2 * i + 1]);
      ranks.push_back(downs.back().size(0));
      widths.push_back(ups.back().size(0));
    }
    const std::vector<int64_t> rankAt = offsetsOf(ranks), columnAt = offsetsOf(widths);
    // The adapters' down projections as one GEMM (their few rows concatenated, each call: they train).
    const torch::Tensor down = torch::cat(downs, 0);  // [sum of ranks, in]
    const torch::Tensor h = torch::mm(x2, down.t());  // [N, sum of ranks]
    // Each up projection writes its column block of y, then the base GEMM adds into all of y.
    const torch::Tensor y = torch::empty({x2.size(0), weight.size(0)}, x2.options());
    for (size_t i = 0; i < parts; ++i)
      y.narrow(1, columnAt[i], widths[i]).addmm_(h.narrow(1, rankAt[i], ranks[i]), ups[i].t(), /*beta=*/0.0, alphas[i]);
    y.addmm_(x2, weight.t());
    // The parts' own downs and ups too: their kept gradient buffers are found from them.
    variable_list saved{x2, h, weight, down};
    saved.insert(saved.end(), downs.begin(), downs.end());
    saved.insert(saved.end(), ups.begin(), ups.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["alphas"] = alphas;
    ctx->saved_data["ranks"] = ranks;
    ctx->saved_data["widths"] = widths;
    // Which gradients to make: x's, then each part's down and up.
    std::vector<bool> wanted{x.requires_grad()};
    for (const torch::Tensor& t : adapters) wanted.push_back(t.requires_grad());
    ctx->saved_data["wanted"] = wanted;
    ctx->saved_data["x_sizes"] = x.sizes().vec();
    std::vector<int64_t> outSizes = x.sizes().vec();
    outSizes.back() = weight.size(0);
    return at::_unsafe_view(y, outSizes);  // not a view to autograd: callers may write into it
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &x2 = saved[0], &h = saved[1], &weight = saved[2], &down = saved[3];
    const std::vector<double> alphas = ctx->saved_data["alphas"].toDoubleVector();
    const std::vector<int64_t> ranks = ctx->saved_data["ranks"].toIntVector();
    const std::vector<int64_t> widths = ctx->saved_data["widths"].toIntVector();
    const std::vector<int64_t> rankAt = offsetsOf(ranks), columnAt = offsetsOf(widths);
    const c10::List<bool> wanted = ctx->saved_data["wanted"].toBoolList();
    const size_t parts = alphas.size();
    const torch::Tensor g = grads[0].reshape({-1, weight.size(0)});  // [N, sum of out]
    const auto gradOf = [&](size_t i) { return g.narrow(1, columnAt[i], widths[i]); };
    const auto hOf = [&](size_t i) { return h.narrow(1, rankAt[i], ranks[i]); };
    const auto downOf = [&](size_t i) -> const torch::Tensor& { return saved[4 + i]; };
    const auto upOf = [&](size_t i) -> const torch::Tensor& { return saved[4 + parts + i]; };
    variable_list out(2 + 2 * parts + 1);
    bool anyDown = false;
    for (size_t i = 0; i < parts; ++i) anyDown |= wanted[1 + 2 * i];
    if (wanted[0] || anyDown) {
      // dh = [alpha_1 g_1 U_1 | alpha_2 g_2 U_2 | ...], each part written into its columns.
      const torch::Tensor dh = torch::empty_like(h);
      for (size_t i = 0; i < parts; ++i)
        dh.narrow(1, rankAt[i], ranks[i]).addmm_(gradOf(i), upOf(i), /*beta=*/0.0, alphas[i]);
      // The down projections' input gradient as one skinny GEMM, the joint weight's accumulating into it.
      if (wanted[0]) out[0] = at::_unsafe_view(torch::mm(dh, down).addmm_(g, weight), ctx->saved_data["x_sizes"].toIntVector());
      for (size_t i = 0; i < parts; ++i) {
        if (!wanted[1 + 2 * i]) continue;
        const torch::Tensor dhPart = dh.narrow(1, rankAt[i], ranks[i]);
        const torch::Tensor kept = keptGradient(downOf(i));
        if (kept.defined()) kept.addmm_(dhPart.t(), x2);  // the gradient stays undefined: it is in the buffer
        else out[2 + 2 * i] = torch::mm(dhPart.t(), x2);
      }
    }
    for (size_t i = 0; i < parts; ++i) {
      if (!wanted[2 + 2 * i]) continue;
      const torch::Tensor kept = keptGradient(upOf(i));
      if (kept.defined()) kept.addmm_(gradOf(i).t(), hOf(i), /*beta=*/1.0, alphas[i]);
      else out[3 + 2 * i] = scaledProduct(gradOf(i).t(), hOf(i), alphas[i]);
    }
    return out;
  }
};

}  // namespace

torch::Tensor frozenJointLinearWithLora(const torch::Tensor& x, const torch::Tensor& weight,
                                        const std::vector<JointLoraPart>& parts) {
  TORCH_CHECK(x.is_contiguous() && (x.dim() == 2 || x.dim() == 3), "frozenJointLinearWithLora: x must be a contiguous [N, in] "
              "or [B, L, in], got ", x.sizes(), " strides ", x.strides());
  TORCH_CHECK(!weight.requires_grad(), "frozenJointLinearWithLora: the joint weight must be frozen");
  TORCH_CHECK(!parts.empty(), "frozenJointLinearWithLora: no adapters");
  std::vector<torch::Tensor> adapters;
  std::vector<double> alphas;
  int64_t rows = 0;
  for (const JointLoraPart& p : parts) {
    TORCH_CHECK(p.down.dim() == 2 && p.up.dim() == 2 && p.down.size(1) == x.size(-1) && p.up.size(1) == p.down.size(0),
                "frozenJointLinearWithLora: an adapter's down ", p.down.sizes(), " and up ", p.up.sizes(), " do not fit x ",
                x.sizes());
    adapters.push_back(p.down);
    adapters.push_back(p.up);
    alphas.push_back(p.alpha);
    rows += p.up.size(0);
  }
  TORCH_CHECK(weight.dim() == 2 && weight.size(0) == rows && weight.size(1) == x.size(-1), "frozenJointLinearWithLora: the "
              "joint weight ", weight.sizes(), " is not the adapters' ", rows, " output rows over x's ", x.size(-1), " features");
  return FrozenJointLinearWithLora::apply(x, weight, at::TensorList(adapters), alphas);
}

}  // namespace sinter::models

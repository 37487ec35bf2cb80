#include "models/adapters/frozen_joint_linear_lora.h"

#include "models/adapters/lora_products.h"

namespace sinter::models {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// A call of this many parts or more batches its runs (below); fewer (self-attention's q/k/v, 3)
// keep one GEMM per part, where the stacking and the gradients' scratch would cost what they save.
constexpr size_t kPartsToBatch = 4;

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

// Consecutive parts of one width, rank and factor (a run): their up projections and gradients are
// one batched GEMM over the stacked ups. Each run as its first part and its count; every part a
// run of its own where the call is not batched.
void findRuns(const std::vector<int64_t>& widths, const std::vector<int64_t>& ranks, const std::vector<double>& alphas,
              bool batched, std::vector<int64_t>* firsts, std::vector<int64_t>* counts) {
  for (size_t i = 0; i < widths.size(); ++i) {
    const bool extends = batched && i > 0 && widths[i] == widths[i - 1] && ranks[i] == ranks[i - 1] && alphas[i] == alphas[i - 1];
    if (extends) ++counts->back();
    else firsts->push_back(static_cast<int64_t>(i)), counts->push_back(1);
  }
}

// A buffer that batched GEMMs write with beta 0: zeros on the CPU where any run is batched, since
// libtorch 1.13's CPU baddbmm reads its input even then (0 * NaN in uninitialised memory stays NaN);
// CUDA's ignores it, so no memset on the step's path there.
torch::Tensor gemmOutput(at::IntArrayRef sizes, const torch::TensorOptions& options, bool batchedRuns) {
  return batchedRuns && !options.device().is_cuda() ? torch::zeros(sizes, options) : torch::empty(sizes, options);
}

bool anyBatchedRun(const std::vector<int64_t>& runCounts) {
  for (int64_t c : runCounts)
    if (c > 1) return true;
  return false;
}

// A run's columns of a side-by-side [N, count * width] block of `t` as [count, N, width] (a view:
// batched GEMMs read and write it in place).
torch::Tensor runColumns(const torch::Tensor& t, int64_t at, int64_t count, int64_t width) {
  return t.narrow(1, at, count * width).view({t.size(0), count, width}).transpose(0, 1);
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
    std::vector<int64_t> runFirsts, runCounts;
    findRuns(widths, ranks, alphas, parts >= kPartsToBatch, &runFirsts, &runCounts);
    // The adapters' down projections as one GEMM (their few rows concatenated, each call: they train).
    const torch::Tensor down = torch::cat(downs, 0);  // [sum of ranks, in]
    const torch::Tensor h = torch::mm(x2, down.t());  // [N, sum of ranks]
    // Each up projection (each run's, batched) writes its column block of y, then the base GEMM adds into all of y.
    const torch::Tensor y = gemmOutput({x2.size(0), weight.size(0)}, x2.options(), anyBatchedRun(runCounts));
    variable_list stacks;  // a run's ups as [count, out, rank], kept for the backward pass; undefined for one part
    for (size_t k = 0; k < runFirsts.size(); ++k) {
      const int64_t i = runFirsts[k], count = runCounts[k];
      if (count == 1) {
        y.narrow(1, columnAt[i], widths[i]).addmm_(h.narrow(1, rankAt[i], ranks[i]), ups[i].t(), /*beta=*/0.0, alphas[i]);
        stacks.emplace_back();
        continue;
      }
      stacks.push_back(torch::stack(at::TensorList(ups).slice(i, count)));
      runColumns(y, columnAt[i], count, widths[i])
          .baddbmm_(runColumns(h, rankAt[i], count, ranks[i]), stacks.back().transpose(1, 2), /*beta=*/0.0, alphas[i]);
    }
    y.addmm_(x2, weight.t());
    // The parts' own downs and ups too: their kept gradient buffers are found from them.
    variable_list saved{x2, h, weight, down};
    saved.insert(saved.end(), downs.begin(), downs.end());
    saved.insert(saved.end(), ups.begin(), ups.end());
    saved.insert(saved.end(), stacks.begin(), stacks.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["alphas"] = alphas;
    ctx->saved_data["ranks"] = ranks;
    ctx->saved_data["widths"] = widths;
    ctx->saved_data["run_firsts"] = runFirsts;
    ctx->saved_data["run_counts"] = runCounts;
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
    const std::vector<int64_t> runFirsts = ctx->saved_data["run_firsts"].toIntVector();
    const std::vector<int64_t> runCounts = ctx->saved_data["run_counts"].toIntVector();
    const std::vector<int64_t> rankAt = offsetsOf(ranks), columnAt = offsetsOf(widths);
    const c10::List<bool> wanted = ctx->saved_data["wanted"].toBoolList();
    const size_t parts = alphas.size();
    const bool batched = parts >= kPartsToBatch;
    torch::Tensor g = grads[0].reshape({-1, weight.size(0)});  // [N, sum of out]
    if (batched) g = g.contiguous();  // the runs' batched GEMMs read it as [count, N, out] views
    const auto gradOf = [&](size_t i) { return g.narrow(1, columnAt[i], widths[i]); };
    const auto hOf = [&](size_t i) { return h.narrow(1, rankAt[i], ranks[i]); };
    const auto downOf = [&](size_t i) -> const torch::Tensor& { return saved[4 + i]; };
    const auto upOf = [&](size_t i) -> const torch::Tensor& { return saved[4 + parts + i]; };
    const auto stackOf = [&](size_t run) -> const torch::Tensor& { return saved[4 + 2 * parts + run]; };
    variable_list out(2 + 2 * parts + 1);
    // Gradients added into their kept buffers at the end, in one multi-tensor addition (batched calls).
    std::vector<torch::Tensor> keptBuffers, keptAdditions;
    bool anyDown = false;
    for (size_t i = 0; i < parts; ++i) anyDown |= wanted[1 + 2 * i];
    if (wanted[0] || anyDown) {
      // dh = [alpha_1 g_1 U_1 | alpha_2 g_2 U_2 | ...], each part (or run) written into its columns.
      const torch::Tensor dh = gemmOutput(h.sizes(), h.options(), anyBatchedRun(runCounts));
      for (size_t k = 0; k < runFirsts.size(); ++k) {
        const int64_t i = runFirsts[k], count = runCounts[k];
        if (count == 1) dh.narrow(1, rankAt[i], ranks[i]).addmm_(gradOf(i), upOf(i), /*beta=*/0.0, alphas[i]);
        else
          runColumns(dh, rankAt[i], count, ranks[i])
              .baddbmm_(runColumns(g, columnAt[i], count, widths[i]), stackOf(k), /*beta=*/0.0, alphas[i]);
      }
      // The down projections' input gradient as one skinny GEMM, the joint weight's accumulating into it.
      if (wanted[0]) out[0] = at::_unsafe_view(torch::mm(dh, down).addmm_(g, weight), ctx->saved_data["x_sizes"].toIntVector());
      // Batched: every down's gradient as one GEMM, [sum of ranks, in], handed out by rows.
      const torch::Tensor dDown = batched && anyDown ? torch::mm(dh.t(), x2) : torch::Tensor();
      for (size_t i = 0; i < parts; ++i) {
        if (!wanted[1 + 2 * i]) continue;
        const torch::Tensor kept = keptGradient(downOf(i));
        if (batched) {
          const torch::Tensor rows = dDown.narrow(0, rankAt[i], ranks[i]);
          if (kept.defined()) keptBuffers.push_back(kept), keptAdditions.push_back(rows);
          else out[2 + 2 * i] = rows;
          continue;
        }
        const torch::Tensor dhPart = dh.narrow(1, rankAt[i], ranks[i]);
        if (kept.defined()) kept.addmm_(dhPart.t(), x2);  // the gradient stays undefined: it is in the buffer
        else out[2 + 2 * i] = torch::mm(dhPart.t(), x2);
      }
    }
    for (size_t k = 0; k < runFirsts.size(); ++k) {
      const int64_t first = runFirsts[k], count = runCounts[k];
      if (count == 1) {
        const size_t i = static_cast<size_t>(first);
        if (!wanted[2 + 2 * i]) continue;
        const torch::Tensor kept = keptGradient(upOf(i));
        if (kept.defined()) kept.addmm_(gradOf(i).t(), hOf(i), /*beta=*/1.0, alphas[i]);
        else out[3 + 2 * i] = scaledProduct(gradOf(i).t(), hOf(i), alphas[i]);
        continue;
      }
      bool anyUp = false;
      for (int64_t i = first; i < first + count; ++i) anyUp |= wanted[2 + 2 * i];
      if (!anyUp) continue;
      // The run's up gradients, alpha g_i^T h_i for each part, as one batched GEMM: [count, out, rank].
      const torch::Tensor dUps = gemmOutput(stackOf(k).sizes(), stackOf(k).options(), /*batchedRuns=*/true).baddbmm_(
          runColumns(g, columnAt[first], count, widths[first]).transpose(1, 2), runColumns(h, rankAt[first], count, ranks[first]),
          /*beta=*/0.0, alphas[first]);
      for (int64_t i = first; i < first + count; ++i) {
        if (!wanted[2 + 2 * i]) continue;
        const torch::Tensor kept = keptGradient(upOf(i));
        if (kept.defined()) keptBuffers.push_back(kept), keptAdditions.push_back(dUps[i - first]);
        else out[3 + 2 * i] = dUps[i - first];
      }
    }
    if (!keptBuffers.empty()) torch::_foreach_add_(keptBuffers, keptAdditions);
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

// On the GPU machine: each fused kernel of runner/kernels against the formula it replaces, forward
// and backward (for GroupNorm+SiLU also the weight and bias gradients), in float64 (the reference) and in the stock operators of the same dtype. Exits 1
// when a kernel is further from the float64 reference than the bound stated for its dtype:
//   float32: 1e-5 relative (max abs difference over max abs value);
//   float16 / bfloat16: 1.5x the stock operators' own distance from the reference, and 1e-2
//   (the kernel rounds once, the stock operators after each operation). GroupNorm+SiLU's reference
//   starts from the inputs rounded to the dtype.
//   build-cuda/bin/sinter-kernel-check
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

#include "kernels/fused_kernels.h"

namespace {

double relative(const torch::Tensor& a, const torch::Tensor& reference) {
  return (a.to(torch::kFloat64) - reference).abs().max().item<double>() / reference.abs().max().item<double>();
}

// SGM's GEGLU as the model writes it with stock operators.
torch::Tensor gegluStock(const torch::Tensor& projected) {
  const auto parts = projected.chunk(2, -1);
  return parts[0] * torch::gelu(parts[1]);
}

bool checkGeglu(torch::Dtype dtype) {
  torch::manual_seed(3);
  const torch::Device cuda(torch::kCUDA);
  // Odd sizes: rows and columns that are not multiples of a block.
  const torch::Tensor base = torch::randn({2, 333, 2 * 257}, torch::TensorOptions().dtype(torch::kFloat64).device(cuda)) * 2;
  const torch::Tensor gradOut = torch::randn({2, 333, 257}, base.options());

  torch::Tensor ref = base.clone().requires_grad_(true);
  const torch::Tensor refOut = gegluStock(ref);
  refOut.backward(gradOut);

  torch::Tensor fused = base.to(dtype).requires_grad_(true);
  const torch::Tensor fusedOut = sinter::kernels::geglu(fused);
  fusedOut.backward(gradOut.to(dtype));

  torch::Tensor stock = base.to(dtype).requires_grad_(true);
  const torch::Tensor stockOut = gegluStock(stock);
  stockOut.backward(gradOut.to(dtype));

  const double fwd = relative(fusedOut, refOut.detach()), bwd = relative(fused.grad(), ref.grad());
  const double stockFwd = relative(stockOut, refOut.detach()), stockBwd = relative(stock.grad(), ref.grad());
  const bool fp32 = dtype == torch::kFloat32;
  const double boundFwd = fp32 ? 1e-5 : std::min(1e-2, 1.5 * stockFwd), boundBwd = fp32 ? 1e-5 : std::min(1e-2, 1.5 * stockBwd);
  const bool ok = fwd <= boundFwd && bwd <= boundBwd;
  std::printf("GEGLU %-9s forward %.2e (stock %.2e, bound %.2e), backward %.2e (stock %.2e, bound %.2e): %s\n",
              c10::toString(dtype), fwd, stockFwd, boundFwd, bwd, stockBwd, boundBwd, ok ? "ok" : "FAILS");
  return ok;
}

// The U-Net's GroupNorm32 then SiLU, as the model writes them with stock operators.
torch::Tensor groupNormSiluStock(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                 int64_t groups) {
  return torch::silu(torch::group_norm(x.to(torch::kFloat32), groups, weight.to(torch::kFloat32), bias.to(torch::kFloat32), 1e-5)
                         .to(x.scalar_type()));
}

// `offset` shifts the input's mean away from zero: the statistics must not cancel in float32.
bool checkGroupNormSilu(torch::Dtype dtype, std::vector<int64_t> shape, int64_t groups, double offset) {
  torch::manual_seed(5);
  const torch::Device cuda(torch::kCUDA);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(cuda);
  const int64_t channels = shape[1];
  torch::Tensor base = torch::randn(shape, f64) * 3 + offset;
  torch::Tensor weightBase = torch::randn({channels}, f64) * 0.5 + 1, biasBase = torch::randn({channels}, f64) * 0.5;
  torch::Tensor gradOut = torch::randn(shape, f64);

  struct Run {
    torch::Tensor x, weight, bias, out;
  };
  auto run = [&](torch::Dtype d, bool fused) {
    auto leaf = [d](const torch::Tensor& t) { return t.to(d).detach().clone().requires_grad_(true); };
    Run r{leaf(base), leaf(weightBase), leaf(biasBase), {}};
    r.out = fused ? sinter::kernels::groupNormSilu(r.x, r.weight, r.bias, groups, 1e-5)
                  : d == torch::kFloat64 ? torch::silu(torch::group_norm(r.x, groups, r.weight, r.bias, 1e-5))
                                         : groupNormSiluStock(r.x, r.weight, r.bias, groups);
    r.out.backward(gradOut.to(d));
    return r;
  };
  // The reference starts from the same rounded input as the kernels, so that the input's own
  // rounding (0.25 at a mean of 40 in bfloat16) is not counted as the kernels' error.
  const Run fused = run(dtype, true), stock = run(dtype, false);
  for (torch::Tensor* t : {&base, &weightBase, &biasBase, &gradOut}) *t = t->to(dtype).to(torch::kFloat64);
  const Run ref = run(torch::kFloat64, false);
  const bool fp32 = dtype == torch::kFloat32;
  bool ok = true;
  std::printf("GroupNorm+SiLU %-9s %s, %lld groups, mean %+.0f:", c10::toString(dtype), c10::str(c10::IntArrayRef(shape)).c_str(),
              static_cast<long long>(groups), offset);
  const std::pair<const char*, std::function<torch::Tensor(const Run&)>> parts[] = {
      {"out", [](const Run& r) { return r.out.detach(); }},
      {"dx", [](const Run& r) { return r.x.grad(); }},
      {"dweight", [](const Run& r) { return r.weight.grad(); }},
      {"dbias", [](const Run& r) { return r.bias.grad(); }}};
  for (const auto& [name, get] : parts) {
    const double ours = relative(get(fused), get(ref)), theirs = relative(get(stock), get(ref));
    const double bound = fp32 ? 1e-5 : std::min(1e-2, 1.5 * theirs);
    const bool partOk = ours <= bound;
    ok = ok && partOk;
    std::printf(" %s %.2e (stock %.2e, bound %.2e)%s", name, ours, theirs, bound, partOk ? "" : " FAILS");
  }
  std::printf(": %s\n", ok ? "ok" : "FAILS");
  return ok;
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::printf("no CUDA device\n");
    return 1;
  }
  bool ok = true;
  for (torch::Dtype dtype : {torch::kFloat32, torch::kFloat16, torch::kBFloat16}) {
    ok = checkGeglu(dtype) && ok;
    // Odd sizes (3 channels a group, rows not a multiple of a block); the U-Net's largest map (one
    // group spans 40 reduction chunks); a mean far from zero.
    ok = checkGroupNormSilu(dtype, {2, 96, 37, 41}, 32, 0.0) && ok;
    ok = checkGroupNormSilu(dtype, {1, 320, 128, 128}, 32, 0.0) && ok;
    ok = checkGroupNormSilu(dtype, {2, 640, 32, 32}, 32, 40.0) && ok;
  }
  return ok ? 0 : 1;
}

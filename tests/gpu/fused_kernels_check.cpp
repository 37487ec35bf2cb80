// On the GPU machine: each fused kernel of runner/kernels against the formula it replaces, forward
// and backward, in float64 (the reference) and in the stock operators of the same dtype. Exits 1
// when a kernel is further from the float64 reference than the bound stated for its dtype:
//   float32: 1e-5 relative (max abs difference over max abs value);
//   float16 / bfloat16: 1.5x the stock operators' own distance from the reference, and 1e-2
//   (the kernel rounds once, the stock operators after each operation).
//   build-cuda/bin/sinter-kernel-check
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>

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

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::printf("no CUDA device\n");
    return 1;
  }
  bool ok = true;
  for (torch::Dtype dtype : {torch::kFloat32, torch::kFloat16, torch::kBFloat16}) ok = checkGeglu(dtype) && ok;
  return ok ? 0 : 1;
}

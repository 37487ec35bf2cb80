// On the GPU machine: SDXL LoRA with fp8_base against bf16. The full-size U-Net (SDXL base 1.0's
// shapes; random weights with torch's initialisation, as --init_checkpoint writes them), a LoRA of
// rank 32 on networks.lora's U-Net targets plus conv_dim 8 on the 3x3 convolutions (so a served
// Conv2d carries an adapter too), 1024x1024 batch 1, with and without gradient checkpointing.
// The same weights and adapters serve both: the bf16 steps first, then the U-Net's Linear and
// Conv2d weights stored as float8 e4m3 in place (as SdxlModelSet::toDevice does with fp8_base),
// and the same steps again. Printed: the resident U-Net, the step's peak (forward and backward,
// LoRA gradients included; no optimizer state), the median step time and the LoRA gradients'
// cosine to bf16's (all of them together, and the per-module minimum and median).
// Exits 1 when a cosine is below 0.98 or fp8_base saves less than 3/4 of the bytes it stores.
//   build-cuda/bin/sinter-sdxl-fp8-check
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "models/unet/sdxl_unet.h"
#include "models/weights/served_weight.h"
#include "network/lora_network.h"
#include "network/lora_targets.h"
#include "train/base/device_info.h"
#include "train/base/mixed_precision.h"
#include "train/base/vram_budget.h"

using namespace sinter;

namespace {


struct Row {
  std::string variant;
  bool checkpointing = false;
  double residentGiB = 0, peakGiB = 0, medianMs = 0;
  std::vector<torch::Tensor> grads;  // per LoRA tensor, fp32, step 1's
};

const torch::Device kCuda(torch::kCUDA, 0);

// What is allocated now: a fresh high-water mark starts at it.
double allocatedBytes() {
  train::resetPeakMemory(kCuda);
  return train::deviceMemoryPeakBytes(kCuda);
}

// One training step's forward and backward on fixed inputs (the same each call); the LoRA
// tensors' gradients are taken (and cleared) after the first of `steps`.
Row run(models::SdxlUnet& unet, const std::vector<torch::Tensor>& lora, const std::string& variant, bool checkpointing, int steps) {
  Row row;
  row.variant = variant;
  row.checkpointing = checkpointing;
  unet->train();
  unet->setGradientCheckpointing(checkpointing, /*preserveRngState=*/false);
  const auto on = torch::TensorOptions().device(torch::kCUDA);
  torch::manual_seed(11);
  const torch::Tensor x = torch::randn({1, 4, 128, 128}, on).to(torch::kBFloat16);
  const torch::Tensor t = torch::full({1}, 500, on.dtype(torch::kLong));
  const torch::Tensor context = torch::randn({1, 77, unet->config().contextDim}, on).to(torch::kBFloat16);
  const torch::Tensor y = torch::randn({1, unet->config().admInChannels}, on).to(torch::kBFloat16);
  const torch::Tensor target = torch::randn({1, 4, 128, 128}, on);
  torch::cuda::synchronize();
  row.residentGiB = allocatedBytes() / kGiB;
  std::vector<double> ms;
  for (int step = 0; step < steps; ++step) {
    train::resetPeakMemory(kCuda);
    const auto start = std::chrono::steady_clock::now();
    const torch::Tensor out = unet->forward(x, t, context, y);
    torch::nn::functional::mse_loss(out.to(torch::kFloat32), target).backward();
    torch::cuda::synchronize();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    row.peakGiB = std::max(row.peakGiB, train::deviceMemoryPeakBytes(kCuda) / kGiB);
    for (const torch::Tensor& p : lora) {
      torch::Tensor g = p.mutable_grad();
      if (step == 0) row.grads.push_back(g.defined() ? g.detach().to(torch::kFloat64).clone() : torch::zeros_like(p, torch::kFloat64));
      if (g.defined()) p.mutable_grad() = torch::Tensor();
    }
  }
  std::sort(ms.begin() + 1, ms.end());  // the first step warms cuDNN and the allocator
  row.medianMs = ms.size() > 1 ? ms[1 + (ms.size() - 1) / 2] : ms[0];
  return row;
}

struct Agreement {
  double all = 0, moduleMin = 1, moduleMedian = 1;
};

// Cosine of the gradients to the reference: all concatenated, and per LoRA module (down and up together).
Agreement agreement(const Row& reference, const Row& other) {
  Agreement a;
  double dot = 0, nr = 0, no = 0;
  std::vector<double> perModule;
  for (size_t i = 0; i + 1 < reference.grads.size(); i += 2) {
    double d = 0, r2 = 0, o2 = 0;
    for (size_t j = i; j < i + 2; ++j) {
      d += (reference.grads[j] * other.grads[j]).sum().item<double>();
      r2 += reference.grads[j].pow(2).sum().item<double>();
      o2 += other.grads[j].pow(2).sum().item<double>();
    }
    dot += d;
    nr += r2;
    no += o2;
    if (r2 > 0 && o2 > 0) perModule.push_back(d / std::sqrt(r2 * o2));
  }
  a.all = dot / std::sqrt(nr * no);
  if (!perModule.empty()) {
    std::sort(perModule.begin(), perModule.end());
    a.moduleMin = perModule.front();
    a.moduleMedian = perModule[perModule.size() / 2];
  }
  return a;
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::printf("no CUDA device\n");
    return 1;
  }
  if (!models::float8InBuild()) {
    std::printf("this libtorch (%s) has no float8: fp8_base cannot run here\n", TORCH_VERSION);
    return 1;
  }
  at::globalContext().setAllowTF32CuBLAS(false);
  const auto built = std::chrono::steady_clock::now();
  torch::manual_seed(3);
  models::SdxlUnet unet(models::SdxlUnetConfig::full());
  train::castFrozen(*unet, torch::kBFloat16);
  models::moveToDevice(*unet, kCuda);

  network::LoraNetworkOptions options;
  options.dim = 32;
  options.alpha = 32;
  options.args.convDim = 8;
  options.args.convAlpha = 8;
  options.device = kCuda;
  network::LoraNetwork lora(options);
  lora.attach(network::sdxlLoraRule(network::LoraComponent::Unet), *unet);
  // lora_up starts at zero (sd-scripts' init), which would leave lora_down without a gradient:
  // small random values instead, the same for every variant.
  std::vector<torch::Tensor> tensors;
  {
    torch::NoGradGuard noGrad;
    torch::manual_seed(5);
    for (const network::LoraModule& m : lora.modules()) {
      m.adapter->up.copy_(torch::randn_like(m.adapter->up) * 0.01);
      tensors.push_back(m.adapter->down);
      tensors.push_back(m.adapter->up);
    }
  }
  std::printf("built the full-size SDXL U-Net (bf16) with %zu LoRA modules in %.0f s\n", lora.modules().size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - built).count());

  const int steps = 4;
  std::vector<Row> rows;
  rows.push_back(run(unet, tensors, "bf16", false, steps));
  rows.push_back(run(unet, tensors, "bf16", true, steps));
  double storedBytes = 0;  // what fp8_base halves: the bf16 bytes of the weights it stores
  {
    torch::NoGradGuard noGrad;
    for (const auto& module : unet->modules(false)) {
      if (auto l = std::dynamic_pointer_cast<models::LinearImpl>(module)) storedBytes += static_cast<double>(l->weight.numel());
      if (auto c = std::dynamic_pointer_cast<models::Conv2dImpl>(module)) storedBytes += static_cast<double>(c->weight.numel());
    }
  }
  const int linears = models::storeLinearsInFloat8(*unet), convs = models::storeConvolutionsInFloat8(*unet);
  std::printf("fp8_base: %d Linear and %d Conv2d weights stored as float8 e4m3 (%.2f GiB saved if nothing else moves)\n\n", linears,
              convs, storedBytes / kGiB);
  rows.push_back(run(unet, tensors, "fp8_base", false, steps));
  rows.push_back(run(unet, tensors, "fp8_base", true, steps));

  bool ok = true;
  std::printf("| variant | gradient checkpointing | resident U-Net + LoRA | step peak | median step | LoRA grad cosine to bf16 (all / module min / median) |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    const Row& ref = r.checkpointing ? rows[1] : rows[0];
    std::string cosine = "reference";
    if (r.variant != "bf16") {
      const Agreement a = agreement(ref, r);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%.4f / %.4f / %.4f", a.all, a.moduleMin, a.moduleMedian);
      cosine = buf;
      const double saved = (ref.peakGiB - r.peakGiB) * kGiB;
      if (a.all < 0.98 || a.moduleMedian < 0.98) ok = false;
      if (saved < 0.75 * storedBytes) ok = false;
      char s[64];
      std::snprintf(s, sizeof s, " (peak %.2f GiB lower)", saved / kGiB);
      cosine += s;
    }
    std::printf("| %s | %s | %.2f GiB | %.2f GiB | %.1f ms | %s |\n", r.variant.c_str(), r.checkpointing ? "on" : "off", r.residentGiB,
                r.peakGiB, r.medianMs, cosine.c_str());
  }
  std::printf("\n%s\n", ok ? "ok" : "FAIL: a cosine below 0.98, or fp8_base saved less than 3/4 of the bytes it stores");
  return ok ? 0 : 1;
}

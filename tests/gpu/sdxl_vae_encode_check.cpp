// On the GPU machine: what SDXL's VAE needs to encode one image while latents are cached (the
// staged start's VAE stage, train/sdxl/sdxl_family.h), against the memory plan's estimate
// (core/vram_costs.h, sdxlBaseMemoryModel().autoencoderEncodeBytes); and the mid-block attention at
// 1024x1024 (16384 tokens, one head of 512 channels) whole, as scaled_dot_product_attention picks
// its kernel, and in the VAE's query chunks (models/layers/attention.h): peak and time of each, and the
// largest difference between them. The full-size VAE with random weights (torch's initialisation),
// bf16 and fp32, 512x512 and 1024x1024, batch 1, under no_grad.
// Exits 1 when the chunked attention differs from the whole call beyond the dtype's rounding, when
// a chunk's extra memory over the attention's inputs is above its bound, or when an encode's
// measured working memory is above the plan's estimate (which would make the start's plan unsafe).
//   build-cuda/bin/sinter-sdxl-vae-encode-check
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "core/vram_plan.h"
#include "models/layers/attention.h"
#include "models/autoencoders/sdxl_vae.h"
#include "train/base/device_info.h"
#include "train/base/mixed_precision.h"
#include "train/base/vram_budget.h"

using namespace sinter;

namespace {

const torch::Device kCuda(torch::kCUDA, 0);

// What is allocated now: a fresh high-water mark starts at it.
double allocatedBytes() {
  train::resetPeakMemory(kCuda);
  return train::deviceMemoryPeakBytes(kCuda);
}

double millisecondsOf(const std::function<void()>& fn) {
  torch::cuda::synchronize();
  const auto start = std::chrono::steady_clock::now();
  fn();
  torch::cuda::synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

const char* nameOf(torch::Dtype dtype) { return dtype == torch::kBFloat16 ? "bf16" : "fp32"; }

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::fprintf(stderr, "sinter-sdxl-vae-encode-check: no CUDA device\n");
    return 2;
  }
  torch::NoGradGuard noGrad;
  int failures = 0;
  const MemoryModel plan = sdxlBaseMemoryModel();

  std::printf("## SDXL VAE encode: working memory against the plan's estimate\n\n");
  std::printf("| dtype | image | weights | encode working memory | plan's estimate | ms |\n|---|---|---|---|---|---|\n");
  for (torch::Dtype dtype : {torch::kBFloat16, torch::kFloat32}) {
    torch::manual_seed(1);
    models::SdxlVae vae(models::SdxlVaeConfig::full());
    vae->eval();
    train::castFrozen(*vae, dtype);
    vae->to(kCuda);
    const double weights = allocatedBytes();
    for (int64_t size : {512, 1024}) {
      const torch::Tensor images = (torch::rand({1, 3, size, size}, torch::TensorOptions().device(kCuda)) * 2 - 1).to(dtype);
      vae->encodeToLatents(images, /*sample=*/false);  // warm-up: cuDNN's algorithms and workspaces chosen
      const double before = allocatedBytes();
      torch::Tensor latents;
      const double ms = millisecondsOf([&] { latents = vae->encodeToLatents(images, false); });
      const double work = train::deviceMemoryPeakBytes(kCuda) - before;
      const double estimate = plan.autoencoderEncodeBytes(size, size, dtype == torch::kBFloat16 ? 2 : 4);
      const bool over = work > estimate;
      failures += over;
      std::printf("| %s | %lldx%lld | %.2f GiB | %.2f GiB | %.2f GiB%s | %.1f |\n", nameOf(dtype), static_cast<long long>(size),
                  static_cast<long long>(size), weights / kGiB, work / kGiB, estimate / kGiB, over ? " UNDER THE MEASURED" : "", ms);
    }
  }

  std::printf("\n## The mid-block attention at 1024x1024: [1, 1, 16384, 512], whole and in query chunks\n\n");
  std::printf("| dtype | call | extra peak over q, k, v | ms | max abs difference to whole |\n|---|---|---|---|---|\n");
  for (torch::Dtype dtype : {torch::kBFloat16, torch::kFloat32}) {
    torch::manual_seed(2);
    const auto on = torch::TensorOptions().device(kCuda).dtype(dtype);
    const torch::Tensor q = torch::randn({1, 1, 16384, 512}, on), k = torch::randn({1, 1, 16384, 512}, on),
                        v = torch::randn({1, 1, 16384, 512}, on);
    const int64_t bound = models::VaeAttnBlockImpl::kMaxScoreElements;
    models::chunkedScaledDotProductAttention(q, k, v, bound);  // warm-up
    double before = allocatedBytes();
    torch::Tensor chunked;
    const double chunkedMs = millisecondsOf([&] { chunked = models::chunkedScaledDotProductAttention(q, k, v, bound); });
    const double chunkedPeak = train::deviceMemoryPeakBytes(kCuda) - before;
    // A chunk's scores and their softmax in float32 at most, and a few tensors of q's size (the
    // output, a chunk's result, a math kernel's scaled copies of k and of the chunk's queries).
    const double chunkBound = 2.0 * static_cast<double>(bound) * 4 + 4.0 * static_cast<double>(q.nbytes());
    const bool chunkOver = chunkedPeak > chunkBound;
    failures += chunkOver;
    torch::Tensor whole;
    double wholePeak = -1, wholeMs = -1;
    std::string wholeNote;
    try {
      models::scaledDotProductAttention(q, k, v);
      before = allocatedBytes();
      wholeMs = millisecondsOf([&] { whole = models::scaledDotProductAttention(q, k, v); });
      wholePeak = train::deviceMemoryPeakBytes(kCuda) - before;
    } catch (const std::exception& e) {
      wholeNote = std::string(" (failed: ") + std::string(e.what()).substr(0, 80) + ")";
    }
    double diff = -1;
    bool diffOver = false;
    if (whole.defined()) {
      diff = (chunked.to(torch::kFloat32) - whole.to(torch::kFloat32)).abs().max().item<double>();
      // Outputs are averages of v (|v| ~ 1): a few units of the dtype's last place.
      const double tolerance = dtype == torch::kBFloat16 ? 3e-2 : 1e-4;
      diffOver = diff > tolerance;
      failures += diffOver;
    }
    std::printf("| %s | whole (the kernel SDPA picks) | %s%s | %.1f | |\n", nameOf(dtype),
                wholePeak < 0 ? "-" : (std::to_string(wholePeak / (1 << 20)).substr(0, 7) + " MiB").c_str(), wholeNote.c_str(), wholeMs);
    std::printf("| %s | chunks of %lld queries | %.1f MiB%s | %.1f | %s%s |\n", nameOf(dtype),
                static_cast<long long>(bound / 16384), chunkedPeak / (1 << 20), chunkOver ? " OVER ITS BOUND" : "", chunkedMs,
                diff < 0 ? "-" : std::to_string(diff).c_str(), diffOver ? " OVER" : "");
  }
  std::printf("\n%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

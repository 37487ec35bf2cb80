#include "train/base/vram_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "core/ascii_text.h"
#include "core/vram_budget_record.h"
#include "core/vram_costs.h"
#include "io/safetensors.h"
#include "models/weights/served_weight.h"
#include "train/base/device_info.h"

#if __has_include(<c10/cuda/CUDACachingAllocator.h>) && __has_include(<cuda_runtime_api.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#define SINTER_VRAM_CUDA 1
#else
#define SINTER_VRAM_CUDA 0
#endif

namespace sinter::train {

std::optional<VramPlan> planBenchmark(Config& config, Family family) {
  if (isUnset(config.get("vram_budget_gb")) || config.getDouble("vram_budget_gb") <= 0) return std::nullopt;
  std::optional<MemoryModel> model = fullSizeMemoryModel(family);
  if (!model) throw std::invalid_argument("vram_budget_gb: Sinter has no memory model for " + std::string(toString(family)));
  model->fp8Capable = model->fp8Capable && models::float8InBuild();
  Config shaped = config;
  const bool lora = config.tab() == Tab::LoRA;
  shaped.set("resolution", std::string("1024,1024"));
  shaped.set("train_batch_size", 1LL);
  shaped.set("network_dim", 32LL);
  shaped.set("mixed_precision", std::string("bf16"));
  shaped.set("full_bf16", !lora);
  shaped.set("optimizer_type", std::string(lora ? "AdamW" : "Adafactor"));
  shaped.set("cache_text_encoder_outputs", true);
  shaped.set("cache_latents", true);
  shaped.set("network_train_unet_only", true);
  PlanRequest request = planRequestFromConfig(shaped, *model);
  request.startMustFit = false;  // the benchmark builds the denoiser alone
  VramPlan plan = planVram(*model, request);
  if (plan.chosen) applyVramPlan(plan, config);
  return plan;
}

void applyVramPlan(const VramPlan& plan, Config& config) {
  SourceLocation where;
  where.file = "vram_budget_gb plan";
  for (const auto& [key, value] : plan.settingsToApply()) config.set(key, value, where);
}

void reportVramPeak(const VramBudgetCheck& check, double measuredBytes, EventSink& events) {
  const double gib = 1073741824.0;
  if (measuredBytes > check.plannedBytes) {
    try {
      const double correction = recordVramPeak(check.recordFile, check.recordKey, check.plannedBytes, measuredBytes, check.correction);
      spdlog::info("vram budget: the plan's estimate was {:.2f} GiB; the next start with {} plans with x{:.2f} ({})",
                   check.plannedBytes / gib, check.recordKey, correction, check.recordFile);
    } catch (const std::exception& e) {
      spdlog::warn("vram budget: could not record the measured peak: {}", e.what());
    }
  }
  if (measuredBytes > check.budgetBytes) {
    const std::string message = fmt::format(
        "vram_budget_gb = {:.1f}: step 1 peaked at {:.2f} GiB, {:.2f} GiB over the budget (the plan estimated {:.2f} GiB); "
        "the next start re-plans with the measured peak",
        check.budgetBytes / gib, measuredBytes / gib, (measuredBytes - check.budgetBytes) / gib, check.plannedBytes / gib);
    spdlog::warn("{}", message);
    events.emit(events::Warning{message});
  } else {
    spdlog::info("vram budget: step 1 peaked at {:.2f} GiB of {:.1f} GiB (the plan estimated {:.2f} GiB)", measuredBytes / gib,
                 check.budgetBytes / gib, check.plannedBytes / gib);
  }
}

void reportStartPeak(const VramBudgetCheck& check, double measuredBytes, EventSink& events) {
  const double gib = 1073741824.0;
  if (measuredBytes > check.budgetBytes) {
    const std::string message = fmt::format(
        "vram_budget_gb = {:.1f}: the run's start (loading, caches, warm-up) peaked at {:.2f} GiB, over the budget (the plan "
        "estimated the start at {:.2f} GiB)",
        check.budgetBytes / gib, measuredBytes / gib, check.plannedStartBytes / gib);
    spdlog::warn("{}", message);
    events.emit(events::Warning{message});
  } else {
    spdlog::info("vram budget: the run's start (loading, caches, warm-up) peaked at {:.2f} GiB of {:.1f} GiB (the plan estimated "
                 "the start at {:.2f} GiB)",
                 measuredBytes / gib, check.budgetBytes / gib, check.plannedStartBytes / gib);
  }
}

double deviceMemoryPeakBytes(const torch::Device& device) {
#if SINTER_VRAM_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    return static_cast<double>(stats.allocated_bytes[0].peak);  // 0: the aggregate over pool types
  }
#endif
  (void)device;
  return 0;
}

std::string applyMemoryCapFromEnvironment(const torch::Device& device) {
  const char* text = std::getenv("SINTER_CUDA_MEMORY_CAP_GB");
  if (!text || !*text) return "";
  char* end = nullptr;
  const double gib = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(gib > 0))
    throw std::invalid_argument(std::string("SINTER_CUDA_MEMORY_CAP_GB: '") + text + "' is no positive number of GiB");
  if (!device.is_cuda()) throw std::invalid_argument("SINTER_CUDA_MEMORY_CAP_GB caps a CUDA device's allocator; this run is on the CPU");
#if SINTER_VRAM_CUDA
  // A first tensor on the device initialises CUDA and its caching allocator, which must exist
  // before a fraction can be set (PyTorch's set_per_process_memory_fraction initialises it too).
  (void)torch::empty({1}, torch::TensorOptions().device(device));
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess || totalBytes == 0)
    throw std::invalid_argument("SINTER_CUDA_MEMORY_CAP_GB: cannot read the device's memory size");
  const double fraction = gib * 1073741824.0 / static_cast<double>(totalBytes);
  if (fraction > 1) throw std::invalid_argument(std::string("SINTER_CUDA_MEMORY_CAP_GB: ") + text + " GiB is more than the device has");
  c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, device.index());
  setEmulatedDeviceBytes(static_cast<int64_t>(gib * 1073741824.0));
  char line[160];
  std::snprintf(line, sizeof line, "emulating a %.1f GiB GPU: the CUDA caching allocator is capped at %.4f of this device's %.1f GiB",
                gib, fraction, static_cast<double>(totalBytes) / 1073741824.0);
  return line;
#else
  throw std::invalid_argument("SINTER_CUDA_MEMORY_CAP_GB: this build's libtorch has no CUDA allocator to cap");
#endif
}

}  // namespace sinter::train

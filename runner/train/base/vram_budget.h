#pragma once
// vram_budget_gb in the runner: the memory plan (core/vram_plan.h) with the parameter counts of the
// run's own checkpoint files (their safetensors headers: exact, nothing loaded), the plan applied
// to the config the run uses, and the check of the measured peak after step 1
// (core/vram_budget_record.h keeps the correction for the next start).
#include <torch/torch.h>

#include <optional>
#include <string>

#include "core/config.h"
#include "core/vram_plan.h"
#include "train/base/event_sink.h"

namespace sinter::train {

// The chosen settings written into `config`, each marked as set by the plan (the compile plan and
// the run read them from there). Does nothing when the plan has no choice.
void applyVramPlan(const VramPlan& plan, Config& config);

// --benchmark_steps with vram_budget_gb: the plan for the benchmark's own step (the full-size model
// with random weights, 1024x1024 batch 1, LoRA rank 32 with AdamW or the whole model with
// Adafactor in bf16, no text encoders or autoencoder on the device), applied to `config`.
// nullopt when vram_budget_gb is not set.
std::optional<VramPlan> planBenchmark(Config& config, Family family);

// What the loop compares after step 1.
struct VramBudgetCheck {
  double budgetBytes = 0, plannedBytes = 0, correction = 1;
  double plannedStartBytes = 0;  // the plan's estimate of the start (FLUX: its largest stage)
  std::string recordFile, recordKey;
};
// After step 1: the measured peak against the budget and the plan. Under: one log line. Over the
// budget: a warning (log and event) saying by how much; over the plan's estimate: the correction
// is recorded (core/vram_budget_record.h) so the next start re-plans with it.
void reportVramPeak(const VramBudgetCheck& check, double measuredBytes, EventSink& events);

// Before step 1: the peak of the run's start (loading, caches, and any warm-up or samples before
// training) against the plan's start estimate and the budget: one log line, a warning when over the budget.
void reportStartPeak(const VramBudgetCheck& check, double measuredBytes, EventSink& events);

// The CUDA caching allocator's peak (allocated bytes since the last reset) on `device`; 0 on the CPU.
double deviceMemoryPeakBytes(const torch::Device& device);

// SINTER_CUDA_MEMORY_CAP_GB=N caps the caching allocator of `device` at N GiB (a fraction of the
// card: emulates a smaller GPU for the budget benchmarks). Returns a line for the log ("" when the
// variable is unset); throws std::invalid_argument for a bad value, or when the build or the
// device cannot cap (the CPU, a libtorch without CUDA).
std::string applyMemoryCapFromEnvironment(const torch::Device& device);

}  // namespace sinter::train

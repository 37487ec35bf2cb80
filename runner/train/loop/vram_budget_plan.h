#pragma once
// vram_budget_gb for a run: the family's memory model sized from the run's own files (its
// registration's sizeMemoryModel), the plan with the correction an earlier run recorded, and what
// the loop checks after step 1 (train/base/vram_budget.h applies and reports).
#include <optional>

#include "core/config.h"
#include "core/vram_plan.h"
#include "train/base/vram_budget.h"

namespace sinter::train {

// The family's memory model sized from the files the config names (its registration's sizeMemoryModel);
// the full-size architecture's counts for a file that is not set or cannot be read.
MemoryModel memoryModelForRun(const Config& config, Family family);

// The plan for a config with vram_budget_gb set (nullopt when it is not), with the correction
// recorded by an earlier run. Throws std::invalid_argument naming the key for an unreadable value.
std::optional<VramPlan> planForRun(const Config& config, Family family);

// nullopt when vram_budget_gb is not set or the family has no memory model. `resolved`: the config
// with the plan applied (the estimate is of the settings it holds).
std::optional<VramBudgetCheck> vramBudgetCheck(const Config& resolved, Family family);

}  // namespace sinter::train

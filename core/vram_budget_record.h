#pragma once
// The memory plan's correction from a run's measured peak (vram_plan.h). A run with vram_budget_gb
// compares its peak after step 1 with the plan's estimate; when it went over, the ratio is written
// here and the next start with the same family, method, resolution and batch multiplies its
// estimates by it, so it re-plans with more room. The file: vram_budget_corrections.json in
// $SINTER_CACHE_DIR, else $XDG_CACHE_HOME/sinter, else ~/.cache/sinter; written atomically.
#include <string>

namespace sinter {

std::string defaultVramRecordFile();

// The key of a plan's request: "flux lora 1024x1024 batch 1"; `method` is PlanRequest::methodName()
// ("lora", "textual_inversion", "full").
std::string vramRecordKey(const std::string& family, const std::string& method, long long width, long long height, long long batch);

// The correction for `key` (at least 1); 1 when there is none or the file cannot be read (a
// damaged file is reported by recordVramPeak, which replaces it).
double readVramCorrection(const std::string& file, const std::string& key);

// After step 1: `plannedBytes` (the estimate, with the correction it used) against `measuredBytes`.
// Over: the key's correction becomes measured / planned times the one used, and the file is
// rewritten atomically; returns the new correction. Not over: nothing is written; returns 0.
// Throws std::runtime_error naming the file when it cannot be written.
double recordVramPeak(const std::string& file, const std::string& key, double plannedBytes, double measuredBytes,
                      double correctionUsed);

}  // namespace sinter

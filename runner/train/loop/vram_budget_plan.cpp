#include "train/loop/vram_budget_plan.h"

#include <stdexcept>

#include "core/vram_budget_record.h"
#include "io/safetensors.h"
#include "models/weights/served_weight.h"
#include "train/base/config_values.h"
#include "train/parts/family_registration.h"

namespace sinter::train {

MemoryModel memoryModelForRun(const Config& config, Family family) {
  std::optional<MemoryModel> full = fullSizeMemoryModel(family);
  if (!full) throw std::invalid_argument("vram_budget_gb: Sinter has no memory model for " + std::string(toString(family)));
  MemoryModel m = *full;
  m.fp8Capable = m.fp8Capable && models::float8InBuild();  // a libtorch without float8 refuses fp8_base
  try {
    // The family's own reading of its files (its registration's sizeMemoryModel).
    const FamilyRegistration* registration = findRegisteredFamily(family);
    if (registration && registration->sizeMemoryModel) registration->sizeMemoryModel(config, m);
  } catch (const io::SafetensorsError&) {
    // The file's own check reports it; the plan keeps the full-size counts.
  }
  return m;
}

std::optional<VramPlan> planForRun(const Config& config, Family family) {
  if (isUnset(config.get("vram_budget_gb")) || config.getDouble("vram_budget_gb") <= 0) return std::nullopt;
  const MemoryModel model = memoryModelForRun(config, family);
  PlanRequest probe = planRequestFromConfig(config, model);
  const double correction = readVramCorrection(
      defaultVramRecordFile(), vramRecordKey(toString(family), probe.methodName(), probe.width, probe.height, probe.batch));
  return planVram(model, planRequestFromConfig(config, model, correction));
}

std::optional<VramBudgetCheck> vramBudgetCheck(const Config& resolved, Family family) {
  if (isUnset(resolved.get("vram_budget_gb")) || resolved.getDouble("vram_budget_gb") <= 0) return std::nullopt;
  if (!fullSizeMemoryModel(family)) return std::nullopt;
  const MemoryModel model = memoryModelForRun(resolved, family);
  VramBudgetCheck check;
  check.recordFile = defaultVramRecordFile();
  PlanRequest request = planRequestFromConfig(resolved, model);
  check.recordKey = vramRecordKey(toString(family), request.methodName(), request.width, request.height, request.batch);
  check.correction = readVramCorrection(check.recordFile, check.recordKey);
  request = planRequestFromConfig(resolved, model, check.correction);
  check.budgetBytes = request.budgetBytes;
  const PlanEstimate estimate = estimatePlan(model, request, request.userFixed);
  check.plannedBytes = estimate.stepPeakBytes;
  check.plannedStartBytes = estimate.startPeakBytes;
  return check;
}

}  // namespace sinter::train

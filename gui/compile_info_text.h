#pragma once
// The Torch Compile Settings panel's explanation: what each chosen setting does in the native
// runner (DESIGN.md §6), the warm-up note, settings that cannot apply with the rest of the form, and
// the memory plan vram_budget_gb chooses (the runner prints the same plan in its dry run).
#include <QString>
#include <QStringList>

#include "core/config.h"

namespace sinter::gui {

struct CompileInfo {
  QStringList effects;   // one sentence per setting, for the current values
  QStringList problems;  // settings that are refused or limited by other options
  QStringList memoryPlan;  // vram_budget_gb's plan (core/vram_plan.h) for the full-size model, when set
  QString html() const;
};

CompileInfo describeCompileSettings(const Config& config);

}  // namespace sinter::gui

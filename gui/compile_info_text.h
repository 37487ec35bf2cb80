#pragma once
// The Torch Compile Settings panel's notes from the form alone: settings that cannot apply with the
// rest of the form, and the memory plan vram_budget_gb chooses (the runner prints the same plan in
// its dry run). What the settings turn on is the runner's own plan (runner_compile_plan.h).
#include <QString>
#include <QStringList>

#include "core/config.h"

namespace sinter::gui {

struct CompileInfo {
  QStringList problems;  // settings that are refused or limited by other options
  QStringList memoryPlan;  // vram_budget_gb's plan (core/vram_plan.h) for the full-size model, when set
  QString html() const;
};

CompileInfo describeCompileSettings(const Config& config);

}  // namespace sinter::gui

#pragma once
// The Torch Compile Settings panel's explanation: what each chosen setting does in the native
// runner (DESIGN.md §6), the warm-up note, and settings that cannot apply with the rest of the form.
#include <QString>
#include <QStringList>

#include "core/config.h"

namespace sinter::gui {

struct CompileInfo {
  QStringList effects;   // one sentence per setting, for the current values
  QStringList problems;  // settings that are refused or limited by other options
  QString html() const;
};

CompileInfo describeCompileSettings(const Config& config);

}  // namespace sinter::gui

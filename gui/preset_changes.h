#pragma once
// What applying a preset would change: each option the preset sets to a different value.
#include <QString>
#include <vector>

#include "core/config.h"

namespace sinter::gui {

struct OptionChange {
  std::string key;
  QString label;     // translated
  QString oldValue;  // as the form shows it ("not set" for None)
  QString newValue;
};

std::vector<OptionChange> presetChanges(const Config& current, const Config& preset);
QString displayValue(const Value& v);

}  // namespace sinter::gui

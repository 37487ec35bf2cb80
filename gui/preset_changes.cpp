#include "preset_changes.h"

#include <QCoreApplication>

#include "core/registry.h"

namespace sinter::gui {

QString displayValue(const Value& v) {
  if (isUnset(v)) return QCoreApplication::translate("PresetChanges", "(not set)");
  if (std::holds_alternative<StringList>(v)) {
    QStringList items;
    for (const std::string& s : std::get<StringList>(v)) items << QString::fromStdString(s);
    return items.join(QLatin1Char(' '));
  }
  return QString::fromStdString(asString(v));
}

std::vector<OptionChange> presetChanges(const Config& current, const Config& preset) {
  std::vector<OptionChange> changes;
  for (const OptionSpec& spec : optionRegistry()) {
    if (!preset.has(spec.key)) continue;
    const Value oldValue = current.get(spec.key);
    const Value newValue = preset.get(spec.key);
    // 1 and 1.0 are the same setting for a float option.
    const bool same = oldValue == newValue ||
                      (spec.type == OptionType::Float && !isUnset(oldValue) && !isUnset(newValue) &&
                       asDouble(oldValue) == asDouble(newValue));
    if (same) continue;
    changes.push_back({spec.key, QCoreApplication::translate("Option", spec.label), displayValue(oldValue),
                       displayValue(newValue)});
  }
  return changes;
}

}  // namespace sinter::gui

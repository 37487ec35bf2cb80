#pragma once
// Helpers shared by the core tests.
#include <string>

#include "core/config.h"
#include "core/registry.h"

namespace sinter::test {

// A valid value for `spec` that differs from its default (and is not an "unset" value).
inline Value sampleValue(const OptionSpec& spec) {
  switch (spec.type) {
    case OptionType::Bool: return Value{!asBool(spec.defaultValue)};
    case OptionType::Int: {
      if (!spec.choices.empty()) return Value{std::stoll(spec.choices.back())};
      long long lo = spec.minValue ? static_cast<long long>(*spec.minValue) : 0;
      long long v = lo + 3;
      if (!isUnset(spec.defaultValue) && asInt(spec.defaultValue) == v) ++v;
      return Value{v};
    }
    case OptionType::Float: {
      double lo = spec.minValue.value_or(0), hi = spec.maxValue.value_or(1e6);
      double v = lo + (std::min(hi, lo + 1.0) - lo) * 0.375;
      if (asDouble(spec.defaultValue, -1) == v) v = lo + 0.125;
      return Value{v};
    }
    case OptionType::Enum:
      for (auto it = spec.choices.rbegin(); it != spec.choices.rend(); ++it)
        if (*it != asString(spec.defaultValue) && *it != "auto") return Value{*it};
      return Value{spec.choices.front()};
    case OptionType::List: return Value{StringList{"a=1", "b=x y", "c=\"q\""}};
    case OptionType::Path: return Value{std::string("/data/my \"images\"\\set ") + spec.key};
    case OptionType::String:
      if (std::string(spec.key) == "resolution") return Value{std::string("768,1024")};
      return Value{std::string("text with ünïcode, \"quotes\" and \\ for ") + spec.key};
  }
  return {};
}

// Every option that applies to the tab and family set to a non-default value (secrets included).
inline Config fullConfig(Tab tab, Family family) {
  Config c;
  for (const auto& spec : optionRegistry()) {
    if (!spec.appliesToTab(tab) || !spec.appliesToFamily(family)) continue;
    c.set(spec.key, sampleValue(spec));
  }
  c.set("training_type", std::string(toString(tab)));
  c.set("model_family", std::string(toString(family)));
  return c;
}

}  // namespace sinter::test

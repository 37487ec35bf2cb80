#pragma once
// Reading options whose sd-scripts default is None: an empty optional when unset.
#include <optional>

#include "core/config.h"

namespace sinter::train {

inline std::optional<double> optionalDouble(const Config& config, const char* key) {
  const Value v = config.get(key);
  if (isUnset(v)) return std::nullopt;
  return asDouble(v);
}

inline std::optional<long long> optionalInt(const Config& config, const char* key) {
  const Value v = config.get(key);
  if (isUnset(v)) return std::nullopt;
  return asInt(v);
}

}  // namespace sinter::train

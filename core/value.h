#pragma once
// One option value. An empty (monostate) value means "unset" (sd-scripts' None).
#include <string>
#include <variant>
#include <vector>

namespace sinter {

using StringList = std::vector<std::string>;
using Value = std::variant<std::monostate, bool, long long, double, std::string, StringList>;

inline bool isUnset(const Value& v) { return std::holds_alternative<std::monostate>(v); }

// A float option may hold an integer written in the file (lr_warmup_steps = 100 stays an int,
// which sd-scripts reads as a step count rather than a ratio).
double asDouble(const Value& v, double fallback = 0.0);
long long asInt(const Value& v, long long fallback = 0);
bool asBool(const Value& v, bool fallback = false);
std::string asString(const Value& v);  // strings, paths, enums; numbers and bools formatted as TOML would
StringList asList(const Value& v);

// Shortest text that reads back to the same double, always with a '.' or exponent (TOML float).
std::string formatDouble(double d);

}  // namespace sinter

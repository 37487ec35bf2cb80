#pragma once
// sd-scripts writes its metadata with Python's str() and json.dumps(); tools that read LoRA files
// (and users comparing files) see those spellings, so we produce the same text.
#include <nlohmann/json.hpp>

#include <string>

namespace sinter::network {

// repr(float): the shortest text that reads back as the same double ("0.0001", "1e-05", "1.0").
std::string pythonFloatRepr(double value);
// str(value) for None (null), bool, int, float and str; lists as "[a, b]".
std::string pythonStr(const nlohmann::ordered_json& value);
// json.dumps(value) with its defaults: ", " and ": " separators, ensure_ascii (\uXXXX escapes).
std::string pythonJsonDumps(const nlohmann::ordered_json& value);

}  // namespace sinter::network

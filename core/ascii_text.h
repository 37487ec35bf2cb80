#pragma once
// Small ASCII text helpers for parsing config values and sd-scripts' argument strings.
#include <string>

namespace sinter {

// `s` without leading and trailing spaces, tabs and line ends.
std::string trimAscii(const std::string& s);
// `s` with A-Z lowered (other bytes unchanged): for case-insensitive names.
std::string lowerAscii(std::string s);
// Whether `s` begins / ends with `affix` (module paths, key names).
bool startsWith(const std::string& s, const std::string& prefix);
bool endsWith(const std::string& s, const std::string& suffix);

}  // namespace sinter

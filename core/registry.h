#pragma once
// The option registry: the single source of truth for every option Sinter knows.
#include <string>
#include <vector>

#include "option.h"

namespace sinter {

// All options, in registry order (which is also the order they are written in).
const std::vector<OptionSpec>& optionRegistry();

// nullptr when the key is unknown.
const OptionSpec* findOption(const std::string& key);

// The closest known key by edit distance, or "" when nothing is close.
std::string suggestKey(const std::string& unknownKey);

// Compile-section keys apply to SDXL and FLUX only.
bool isCompileKey(const std::string& key);

}  // namespace sinter

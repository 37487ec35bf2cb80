#pragma once
// Cross-field rules: combinations that sd-scripts (or Sinter's runner) rejects or ignores.
#include <vector>

#include "config.h"

namespace sinter {

// Errors for combinations that cannot run, warnings for settings that will be ignored.
// Each diagnostic names the key and, where the config came from a file, its line.
std::vector<Diagnostic> validateConfig(const Config& config);

}  // namespace sinter

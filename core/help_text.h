#pragma once
// --help text generated from the registry.
#include <string>

namespace sinter {

// `usage` is the program's own synopsis; options follow, grouped by section.
std::string registryHelpText(const std::string& usage);

}  // namespace sinter

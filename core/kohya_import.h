#pragma once
// Import of kohya_ss GUI JSON configs (the files its "Save config" writes, and its presets).
#include <string>

#include "core/kohya_import_result.h"

namespace sinter {

// Throws ConfigError for a file that is not JSON or not an object.
KohyaImportResult importKohyaJson(const std::string& text, const std::string& fileName);
KohyaImportResult importKohyaJsonFile(const std::string& path);

}  // namespace sinter

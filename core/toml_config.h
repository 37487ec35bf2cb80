#pragma once
// Reading and writing configs as TOML, under DESIGN.md §2's rules.
#include <optional>
#include <string>
#include <vector>

#include "config.h"

namespace sinter {

struct LoadResult {
  Config config;
  std::vector<Diagnostic> warnings;  // accepted, but worth telling (e.g. keys for another family)
};

// Parses TOML text (flat keys, or keys inside any [section] tables, flattened as sd-scripts
// does). Unknown keys, wrong types, out-of-range values, bad enum values, duplicate keys, syntax
// errors, non-UTF-8 and empty files all throw ConfigError naming `fileName`, line and column;
// so do sd-scripts options Sinter refuses (with why), while those it ignores are warnings
// (foreign_options.h). Neither is stored in the config.
LoadResult parseConfigToml(const std::string& text, const std::string& fileName);
LoadResult loadConfigFile(const std::string& path);

// The canonical TOML for `config` on a tab and family: every option that applies, grouped in
// sections in registry order, except unset values and secrets. Compile keys only for SDXL/FLUX.
// When `family` is empty (model_family = auto) every family's options are written.
std::string writeConfigToml(const Config& config, Tab tab, std::optional<Family> family);
// Uses the config's own training_type and model_family.
std::string writeConfigToml(const Config& config);

// Writes atomically (temporary file in the same folder, fsync, rename). Throws std::runtime_error.
void saveConfigFile(const std::string& path, const Config& config);

}  // namespace sinter

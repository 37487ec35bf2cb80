#pragma once
// Reading and writing configs as TOML, under DESIGN.md §2's rules.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config.h"

namespace sinter {

struct LoadResult {
  Config config;
  std::vector<Diagnostic> warnings;  // accepted, but worth telling (e.g. keys for another family)
};

// How a config file is read (DESIGN.md §2, "Reading a config as sd-scripts does").
//   AsSdScripts: where sd-scripts' reading is harmless, as it reads: a key that is no option is
//     ignored with a warning (another tool's key, or one this build does not know), unless it is a
//     near miss of an option (a typo: an error with the suggestion); a key set in two sections
//     takes the later value with a warning; `false` for a text or path option means unset (Python's
//     falsy None); a list for an option sd-scripts takes as a list and uses the first of
//     (text_encoder_lr) gives its first value.
//   Strict: each of those is an error (`sinter-runner --strict`), and so is an sd-scripts option
//     Sinter ignores (foreign_options.h: a Hub upload, a memory hint) set to anything but inert.
enum class ConfigReading : std::uint8_t { AsSdScripts, Strict };

// Parses TOML text (flat keys, or keys inside any [section] tables, flattened as sd-scripts
// does). Wrong types, out-of-range values, bad enum values, keys repeated in one table, syntax
// errors, non-UTF-8 and empty files throw ConfigError naming `fileName`, line and column; so do
// sd-scripts options Sinter refuses (with why), while those it ignores are warnings
// (foreign_options.h). Neither is stored in the config. Unknown and repeated keys: `reading`.
LoadResult parseConfigToml(const std::string& text, const std::string& fileName,
                           ConfigReading reading = ConfigReading::AsSdScripts);
LoadResult loadConfigFile(const std::string& path, ConfigReading reading = ConfigReading::AsSdScripts);

// The canonical TOML for `config` on a tab and family: every option that applies, grouped in
// sections in registry order, except unset values and secrets. Compile keys only for SDXL/FLUX.
// When `family` is empty (model_family = auto) every family's options are written.
std::string writeConfigToml(const Config& config, Tab tab, std::optional<Family> family);
// Uses the config's own training_type and model_family.
std::string writeConfigToml(const Config& config);

// Writes atomically (temporary file in the same folder, fsync, rename). Throws std::runtime_error.
void saveConfigFile(const std::string& path, const Config& config);

// A TOML basic string ("...") holding `s`, escaped (the writers' quoting, also the run queue's).
std::string quoteTomlString(const std::string& s);

}  // namespace sinter

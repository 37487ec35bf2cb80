#pragma once
// A training configuration: option values by key, plus where each came from.
#include <map>
#include <string>
#include <vector>

#include "diagnostics.h"
#include "option.h"

namespace sinter {

class Config {
 public:
  // The value if set, else the option's default. Throws std::out_of_range for unknown keys.
  Value get(const std::string& key) const;
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  // True when the value (or the default) is not one its option's UnsetRule reads as unset: a `0`
  // that means off (multires_noise_iterations) is not set. Throws std::out_of_range for unknown keys.
  bool isSet(const std::string& key) const;
  // Sets a value (already checked against the registry by the caller). Unset removes it.
  void set(const std::string& key, Value v, SourceLocation where = {});
  void erase(const std::string& key);
  const std::map<std::string, Value>& explicitValues() const { return values_; }
  SourceLocation whereSet(const std::string& key) const;
  // Overlays every value set in `other` (command-line overrides, presets).
  void overlay(const Config& other);

  // Convenience getters (registry defaults apply).
  bool getBool(const std::string& key) const { return asBool(get(key)); }
  long long getInt(const std::string& key) const { return asInt(get(key)); }
  double getDouble(const std::string& key) const { return asDouble(get(key)); }
  std::string getString(const std::string& key) const { return asString(get(key)); }
  StringList getList(const std::string& key) const { return asList(get(key)); }

  Tab tab() const;                  // from training_type
  std::optional<Family> family() const;  // from model_family; nullopt for "auto"

  // Same effective value for every registry option.
  bool sameEffectiveValues(const Config& other) const;
  // Keys whose effective values differ, in registry order.
  std::vector<std::string> differingKeys(const Config& other) const;

 private:
  std::map<std::string, Value> values_;
  std::map<std::string, SourceLocation> where_;
};

// Checks one value against its option (type, range, enum). Converts where the registry allows
// (an int for a float option, a bool for compile_dynamic, an int for resolution).
// Returns an error message, or "" when the value is acceptable; `out` receives the stored value.
std::string checkValue(const OptionSpec& spec, const Value& in, Value& out);
// The warning for an option given several values where sd-scripts uses the first
// (OptionSpec::firstOfSdScriptsList): `first` is used, `others` (as written) are not.
std::string firstOfListNote(const OptionSpec& spec, const std::string& first, const std::string& others);
// The name a run's files take (sd-scripts' model_name): output_name; unset, the token for a
// `tab` of textual inversion (train_textual_inversion.py), else "last". One answer for the runner's
// saves, the app's command preview and checkpoint grid, and the queue's resume folders.
std::string runOutputName(const Config& config, Tab tab);
inline std::string runOutputName(const Config& config) { return runOutputName(config, config.tab()); }
// "second", "third", ...: a value's place in such a list (index 1, 2, ...), as messages name it.
std::string listPlaceName(std::size_t index);
// The option the list value at `index` (1: the second) sets, or null where no network reads it.
const OptionSpec* laterListOption(const OptionSpec& spec, std::size_t index);

}  // namespace sinter

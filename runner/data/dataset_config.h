#pragma once
// sd-scripts' dataset_config TOML ([general], [[datasets]], [[datasets.subsets]]), validated like
// Sinter's configs: unknown keys (with a "did you mean"), wrong types and unsupported settings
// are errors naming the file, line and column, all reported at once as a sinter::ConfigError.
#include <map>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/value.h"

namespace sinter::data {

// The most repeats a subset may ask for: an epoch is counted, never listed per repeat, but a
// count past this is a typo (a folder named "99999999999_demo"), refused naming its folder.
constexpr long long kMaxRepeats = 1000000;

struct LocatedValue {
  Value value;  // bool, long long, double, string, or a list of strings (resolution = [w, h])
  SourceLocation where;
};
// One level of sd-scripts' fallback chain: subset, dataset, [general], command line, defaults.
using ParamLayer = std::map<std::string, LocatedValue>;

struct DatasetConfigFile {
  struct Dataset {
    ParamLayer params;
    std::vector<ParamLayer> subsets;
    SourceLocation where;
  };
  std::string path;
  ParamLayer general;
  std::vector<Dataset> datasets;
};

// Throws sinter::ConfigError carrying every problem found.
DatasetConfigFile parseDatasetConfigToml(const std::string& text, const std::string& fileName);
DatasetConfigFile loadDatasetConfigFile(const std::string& path);

// True when `key` may appear in a subset, a dataset or [general] respectively.
bool isSubsetKey(const std::string& key);
bool isDatasetKey(const std::string& key);
bool isGeneralKey(const std::string& key);

}  // namespace sinter::data

#pragma once
// Keys that other tools of the ecosystem write into sd-scripts-style configs, which are neither
// Sinter options nor options of sd-scripts' training scripts (foreign_options.h): kohya_ss GUI
// fields that end up in its saved TOMLs, and options of sd-scripts' other scripts. sd-scripts
// ignores them in a config; so does Sinter, with a warning saying what the key is, even where the
// key looks like a typo of an option (kohya_ss's `sdxl` is no misspelt `sdpa`). DESIGN.md §2.
#include <string>
#include <vector>

namespace sinter {

struct EcosystemKey {
  const char* key;
  const char* source;  // "a field of kohya_ss's GUI", "an option of sd-scripts' sd3_train.py", ...
  const char* what;    // what it is, in a few words
};

const std::vector<EcosystemKey>& ecosystemKeys();

// nullptr when `key` is not one of them.
const EcosystemKey* findEcosystemKey(const std::string& key);

}  // namespace sinter

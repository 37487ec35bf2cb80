#pragma once
// Import of kohya_ss GUI JSON configs (the files its "Save config" writes).
#include <string>
#include <vector>

#include "config.h"

namespace sinter {

struct KohyaImportResult {
  Config config;
  std::vector<std::string> unmapped;  // "key: reason" for each value that could not be carried over
  std::vector<std::string> notes;     // renames and conversions that were applied
  // kohya_ss's accelerate launch setting num_processes (GPUs on this machine, one process each): the
  // app's GPUs setting, the runner's --nproc_per_node, not a config key. 0 when the file has none.
  int processes = 0;
};

// Throws ConfigError for a file that is not JSON or not an object.
KohyaImportResult importKohyaJson(const std::string& text, const std::string& fileName);
KohyaImportResult importKohyaJsonFile(const std::string& path);

}  // namespace sinter

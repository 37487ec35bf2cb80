#pragma once
// What a kohya_ss import gives: the config and the report of what became of each key of the file
// (kohya_import.h makes it; kohya_import_context.h fills it while the import's parts run).
#include <string>
#include <vector>

#include "core/config.h"

namespace sinter {

// One line of the import report: what became of one or more kohya_ss JSON keys.
struct KohyaImportItem {
  std::vector<std::string> keys;  // the kohya_ss keys it accounts for
  std::string text;
};

struct KohyaImportResult {
  Config config;
  // Every key of the file lands in exactly one group.
  // Settings whose effect on training Sinter does not reproduce: a value with no Sinter option, a
  // network Sinter does not train, a network argument its runner refuses, ...
  std::vector<KohyaImportItem> notCarried;
  // Settings in the config, with kohya_ss's renames shown ("optimizer -> optimizer_type = ...").
  std::vector<KohyaImportItem> carried;
  // kohya_ss's "unset" values (0, "", null), its GUI defaults, and settings kohya_ss itself does not
  // pass on for this model family or LoRA type: nothing lost.
  std::vector<KohyaImportItem> atDefaults;
  // kohya_ss's accelerate launch setting num_processes (GPUs on this machine, one process each): the
  // app's GPUs setting, the runner's --nproc_per_node, not a config key. 0 when the file has none.
  int processes = 0;
};

}  // namespace sinter

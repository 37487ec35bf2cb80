#pragma once
// sd-scripts' training scripts by name, and what each trains: the family and training type that
// `sinter-runner SCRIPT ARGS` takes from the name as sd-scripts does (its scripts have no
// model_family or training_type option; the script is the choice).
#include <optional>
#include <string>
#include <vector>

#include "core/option.h"

namespace sinter {

struct TrainingScript {
  const char* name;               // "sdxl_train_network.py"
  std::optional<Family> family;   // nullopt: SD 1.x or 2.x, told apart by the checkpoint (model_family auto)
  Tab tab;                        // LoRA, textual inversion, or DreamBooth for a full-weight script
  // The full-weight scripts take a DreamBooth folder dataset or fine-tune metadata (in_json) alike:
  // with in_json the run is a fine-tune. fine_tune.py is one always.
  bool fineTuneWithInJson = false;
};

const std::vector<TrainingScript>& trainingScripts();

// The script named by `arg` (a bare name or a path ending in it), or nullptr.
const TrainingScript* findTrainingScript(const std::string& arg);

// The script whose name makes `sinter-runner SCRIPT --config_file FILE` train what `family` (nullopt:
// SD 1.x/2.x or auto) and `tab` say, given whether the config sets in_json; nullptr when none does
// (a fine-tune of SDXL or FLUX whose metadata comes from a dataset config, not in_json).
const TrainingScript* trainingScriptFor(std::optional<Family> family, Tab tab, bool hasInJson);

// Whether `script` trains `family` (a script without a family trains SD 1.x and 2.x).
bool scriptTrains(const TrainingScript& script, Family family);

}  // namespace sinter

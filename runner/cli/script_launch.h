#pragma once
// The drop-in command line: `sinter-runner [ACCELERATE FLAGS] SCRIPT.py [ARGS]` runs what
// `accelerate launch [ACCELERATE FLAGS] SCRIPT.py [ARGS]` runs with sd-scripts (DESIGN.md §3). The
// script's name chooses the family and training type (core/training_scripts.h); accelerate's flags
// before it become the runner's (--num_processes N is --nproc_per_node N) or are named as changing
// nothing here; the arguments after it are sd-scripts' and the runner's, read as ever.
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/training_scripts.h"

namespace sinter::runner {

struct ScriptLaunch {
  const TrainingScript* script = nullptr;
  std::vector<std::string> args;     // the runner's command line, without the script
  std::vector<Diagnostic> warnings;  // accelerate flags that change nothing here, with why
};

// nullopt when `args` name no training script. Throws ConfigError for an accelerate flag that
// asks for what the runner does not do (several machines), naming it.
std::optional<ScriptLaunch> translateScriptLaunch(const std::vector<std::string>& args);

// The script's family and training type set in `config` (the file and the command line read):
// errors where they say otherwise (model_family = "flux" with sdxl_train_network.py). A
// full-weight script trains DreamBooth, or fine-tune with in_json (as the config says, when it
// names either).
std::vector<Diagnostic> applyTrainingScript(const TrainingScript& script, Config& config);

}  // namespace sinter::runner

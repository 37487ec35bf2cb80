#include "core/training_scripts.h"

#include <algorithm>

namespace sinter {

const std::vector<TrainingScript>& trainingScripts() {
  static const std::vector<TrainingScript> scripts{
      {"train_network.py", std::nullopt, Tab::LoRA},
      {"sdxl_train_network.py", Family::SDXL, Tab::LoRA},
      {"flux_train_network.py", Family::FLUX, Tab::LoRA},
      {"sd3_train_network.py", Family::SD3, Tab::LoRA},
      {"train_db.py", std::nullopt, Tab::DreamBooth},
      {"fine_tune.py", std::nullopt, Tab::FineTune},
      {"sdxl_train.py", Family::SDXL, Tab::DreamBooth, true},
      {"flux_train.py", Family::FLUX, Tab::DreamBooth, true},
      {"sd3_train.py", Family::SD3, Tab::DreamBooth, true},
      {"train_textual_inversion.py", std::nullopt, Tab::TextualInversion},
      {"sdxl_train_textual_inversion.py", Family::SDXL, Tab::TextualInversion},
  };
  return scripts;
}

const TrainingScript* findTrainingScript(const std::string& arg) {
  const std::string base = arg.substr(arg.find_last_of('/') == std::string::npos ? 0 : arg.find_last_of('/') + 1);
  for (const TrainingScript& s : trainingScripts())
    if (base == s.name) return &s;
  return nullptr;
}

const TrainingScript* trainingScriptFor(std::optional<Family> family, Tab tab, bool hasInJson) {
  // A family no script names (SD 1.x/2.x) is told by the checkpoint: the scripts without a family.
  if (family && std::none_of(trainingScripts().begin(), trainingScripts().end(),
                             [&](const TrainingScript& s) { return s.family == family; }))
    family.reset();
  for (const TrainingScript& s : trainingScripts()) {
    if (s.family != family) continue;
    const Tab trains = s.fineTuneWithInJson && hasInJson ? Tab::FineTune : s.tab;
    if (trains == tab) return &s;
  }
  return nullptr;
}

bool scriptTrains(const TrainingScript& script, Family family) {
  return script.family ? *script.family == family : family == Family::SD15 || family == Family::SD2;
}

}  // namespace sinter

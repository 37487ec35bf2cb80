#pragma once
// Continue a run with changed settings (issue 57 item 5): a state records the settings it was saved
// with (train_state.json's "settings", every option the run had set), and a run resuming it lists
// what it changes (learning rate, scheduler, epochs or steps, batch size, ...) and refuses what a
// state cannot carry over: the model, the training method, the network's shape, the optimizer, the
// parts trained. The dataset's side (repeats, images, batch size) is the data position's
// (resume_position.h), which compares the epoch's batches.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/config.h"

namespace sinter::train {

// The value of every option `config` sets, as JSON (bool, number, string or list), keyed by name.
nlohmann::json settingsJson(const Config& config);

struct SettingChange {
  std::string key;
  std::string was, now;  // as TOML writes them; "(unset)" where the option was not set
  std::string refusal;   // why a state cannot continue with this change; empty: it can
};

// The options whose value differs between a state's settings and `now` (`resume` itself aside), in
// the registry's order; a network_args entry is compared item by item (key `network_args.<name>`).
std::vector<SettingChange> settingChanges(const nlohmann::json& saved, const Config& now);

// The refused changes as one InputError naming the state file, each key, both values and why;
// does nothing when there are none. A state saved before it recorded settings has nothing to compare.
void refuseUncarriedSettings(const nlohmann::json& progress, const Config& now, const std::string& stateFile);

// The changes the resumed run carries, one line each ("learning_rate: 0.0001 -> 5e-05"), for the log.
std::vector<std::string> describeSettingChanges(const nlohmann::json& progress, const Config& now);

}  // namespace sinter::train

#pragma once
// What to save when, and what to delete, with sd-scripts' file names and rules
// (train_util.py: "{name}-{epoch:06d}", "{name}-step{step:08d}", "{name}"; save_last_n_*, and
// save_last_n_*_state, which keep states by their own window in place of save_last_n_*'s).
#include <optional>
#include <string>

#include "core/config.h"

namespace sinter::train {

std::string epochFileStem(const std::string& name, long long epoch);  // 1-based epoch
std::string stepFileStem(const std::string& name, long long step);

struct SaveSchedule {
  std::optional<long long> everyEpochs, everySteps, lastEpochs, lastSteps;
  std::optional<long long> lastEpochsState, lastStepsState;  // save_last_n_epochs_state, save_last_n_steps_state
  bool saveState = false;
  bool saveStateOnTrainEnd = false;

  static SaveSchedule fromConfig(const Config& config);
  // After epoch `epoch` (1-based) of `numEpochs`: the final epoch is saved as the final model.
  bool saveAfterEpoch(long long epoch, long long numEpochs) const;
  bool saveAfterStep(long long step, long long totalSteps) const;
  // The epoch / step save that falls out of the kept window once `epoch` / `step` is saved.
  std::optional<long long> epochToRemove(long long epoch) const;
  std::optional<long long> stepToRemove(long long step) const;
  // The same for the states saved with them (save_last_n_*_state, else save_last_n_*).
  std::optional<long long> epochStateToRemove(long long epoch) const;
  std::optional<long long> stepStateToRemove(long long step) const;
};

}  // namespace sinter::train

#include "train/loop/save_schedule.h"

#include <cstdio>

#include "train/base/config_values.h"

namespace sinter::train {

std::string outputName(const Config& config) {
  const std::string name = config.getString("output_name");
  return name.empty() ? "last" : name;
}

std::string epochFileStem(const std::string& name, long long epoch) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "-%06lld", epoch);
  return name + buf;
}

std::string stepFileStem(const std::string& name, long long step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "-step%08lld", step);
  return name + buf;
}

SaveSchedule SaveSchedule::fromConfig(const Config& c) {
  SaveSchedule s;
  s.everyEpochs = optionalInt(c, "save_every_n_epochs");
  s.everySteps = optionalInt(c, "save_every_n_steps");
  s.lastEpochs = optionalInt(c, "save_last_n_epochs");
  s.lastSteps = optionalInt(c, "save_last_n_steps");
  s.saveState = c.getBool("save_state");
  s.saveStateOnTrainEnd = c.getBool("save_state_on_train_end");
  return s;
}

bool SaveSchedule::saveAfterEpoch(long long epoch, long long numEpochs) const {
  return everyEpochs && epoch % *everyEpochs == 0 && epoch < numEpochs;
}

bool SaveSchedule::saveAfterStep(long long step, long long totalSteps) const {
  return everySteps && step % *everySteps == 0 && step < totalSteps;
}

std::optional<long long> SaveSchedule::epochToRemove(long long epoch) const {
  if (!everyEpochs || !lastEpochs) return std::nullopt;
  const long long remove = epoch - *everyEpochs * *lastEpochs;  // sd-scripts' remove_epoch_no
  return remove > 0 ? std::optional<long long>(remove) : std::nullopt;
}

std::optional<long long> SaveSchedule::stepToRemove(long long step) const {
  if (!everySteps || !lastSteps) return std::nullopt;
  long long remove = step - *lastSteps - 1;  // sd-scripts' remove_step_no
  remove -= remove % *everySteps;
  return remove > 0 ? std::optional<long long>(remove) : std::nullopt;
}

}  // namespace sinter::train

#include "train/loop/save_schedule.h"

#include <cstdio>

#include "train/base/config_values.h"

namespace sinter::train {

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
  s.lastEpochsState = optionalInt(c, "save_last_n_epochs_state");
  s.lastStepsState = optionalInt(c, "save_last_n_steps_state");
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

namespace {

std::optional<long long> epochOutside(std::optional<long long> every, std::optional<long long> last, long long epoch) {
  if (!every || !last) return std::nullopt;
  const long long remove = epoch - *every * *last;  // sd-scripts' remove_epoch_no
  return remove > 0 ? std::optional<long long>(remove) : std::nullopt;
}

std::optional<long long> stepOutside(std::optional<long long> every, std::optional<long long> last, long long step) {
  if (!every || !last) return std::nullopt;
  long long remove = step - *last - 1;  // sd-scripts' remove_step_no
  remove -= remove % *every;
  return remove > 0 ? std::optional<long long>(remove) : std::nullopt;
}

}  // namespace

std::optional<long long> SaveSchedule::epochToRemove(long long epoch) const { return epochOutside(everyEpochs, lastEpochs, epoch); }

std::optional<long long> SaveSchedule::stepToRemove(long long step) const { return stepOutside(everySteps, lastSteps, step); }

std::optional<long long> SaveSchedule::epochStateToRemove(long long epoch) const {
  return epochOutside(everyEpochs, lastEpochsState ? lastEpochsState : lastEpochs, epoch);
}

std::optional<long long> SaveSchedule::stepStateToRemove(long long step) const {
  return stepOutside(everySteps, lastStepsState ? lastStepsState : lastSteps, step);
}

}  // namespace sinter::train

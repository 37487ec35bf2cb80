#include "train/optim/lr_schedule_config.h"

#include <stdexcept>

#include "train/base/config_values.h"

namespace sinter::train {

LrScheduleOptions lrScheduleOptionsFromConfig(const Config& config, const OptimizerSettings& optimizer, bool* replaced) {
  LrScheduleOptions o;
  bool switched = false;
  o.type = resolveLrScheduler(config.getString("lr_scheduler"), optimizer, &switched);
  if (replaced) *replaced = switched;
  o.numCycles = config.getInt("lr_scheduler_num_cycles");
  o.power = config.getDouble("lr_scheduler_power");
  o.initialLr = config.getDouble("learning_rate");
  o.minLrRatio = optionalDouble(config, "lr_scheduler_min_lr_ratio");
  o.timescale = optionalInt(config, "lr_scheduler_timescale");
  const std::vector<SchedulerArg> args = parseLrSchedulerArgs(config.getList("lr_scheduler_args"));
  const std::string type = config.getString("lr_scheduler_type");
  if (!type.empty()) {
    // sd-scripts hands Adafactor lr=None with relative_step: a torch scheduler has no rate to scale.
    if (optimizer.type == "Adafactor" && optimizer.adafactor.relativeStep)
      throw std::invalid_argument("lr_scheduler_type " + type + " does not go with Adafactor's relative_step, which sets the learning "
                                  "rate itself: set relative_step=False in optimizer_args, or leave lr_scheduler_type empty");
    o.torchScheduler = parseTorchLrScheduler(type, args);
  } else {
    applyLrSchedulerArgs(o, args);
  }
  return o;
}

}  // namespace sinter::train

#pragma once
// The learning-rate schedule a config asks for (lr_scheduler, lr_scheduler_type and
// lr_scheduler_args, lr_scheduler_num_cycles, lr_scheduler_power, lr_scheduler_timescale,
// lr_scheduler_min_lr_ratio), as sd-scripts' get_scheduler_fix reads them. The warmup and decay
// steps need the run's length and are resolved later (resolveWarmupSteps).
#include "core/config.h"
#include "train/optim/lr_schedule.h"
#include "train/optim/optimizer_args.h"

namespace sinter::train {

// `replaced`: Adafactor's relative step took lr_scheduler's place. Bad values are
// std::invalid_argument naming the key.
LrScheduleOptions lrScheduleOptionsFromConfig(const Config& config, const OptimizerSettings& optimizer, bool* replaced = nullptr);

}  // namespace sinter::train

#pragma once
// The optimizer a config asks for, as sd-scripts' get_optimizer settles it: use_8bit_adam means
// AdamW8bit and use_lion_optimizer means Lion where optimizer_type is empty; either beside an
// optimizer_type, or both together, is an error naming them (sd-scripts asserts the same).
#include <string>

#include "core/config.h"
#include "train/optim/optimizer_args.h"

namespace sinter::train {

// optimizer_type, or the type the switches name ("" stays "": AdamW).
std::string configuredOptimizerType(const Config& config);
// That type with optimizer_args, checked.
OptimizerSettings optimizerSettingsFromConfig(const Config& config);

}  // namespace sinter::train

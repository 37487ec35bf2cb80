#include "train/optim/optimizer_choice.h"

#include <stdexcept>

namespace sinter::train {

std::string configuredOptimizerType(const Config& config) {
  const std::string type = config.getString("optimizer_type");
  const bool adam8bit = config.getBool("use_8bit_adam");
  const bool lion = config.getBool("use_lion_optimizer");
  if (adam8bit && lion) throw std::invalid_argument("use_8bit_adam and use_lion_optimizer are both set: choose one");
  if ((adam8bit || lion) && !type.empty())
    throw std::invalid_argument(std::string(adam8bit ? "use_8bit_adam" : "use_lion_optimizer") + " and optimizer_type = \"" + type +
                                "\" are both set: choose one");
  if (adam8bit) return "AdamW8bit";
  if (lion) return "Lion";
  return type;
}

OptimizerSettings optimizerSettingsFromConfig(const Config& config) {
  return parseOptimizerSettings(configuredOptimizerType(config), config.getList("optimizer_args"));
}

}  // namespace sinter::train

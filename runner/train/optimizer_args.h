#pragma once
// optimizer_type and optimizer_args as sd-scripts accepts them (train_util.get_optimizer):
// "key=value" items whose values are Python literals ("weight_decay=0.01", "betas=0.9,0.999").
#include <string>
#include <vector>

namespace sinter::train {

struct AdamWHyperparameters {
  double beta1 = 0.9;  // torch.optim.AdamW defaults
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 0.01;
};

// The optimizer types this build has; optimizer_type is matched case-insensitively ("" is AdamW).
const std::vector<std::string>& availableOptimizerTypes();
// The canonical name ("AdamW"), or std::invalid_argument listing the available ones.
std::string resolveOptimizerType(const std::string& optimizerType);

struct ParsedOptimizerArgs {
  AdamWHyperparameters hyper;
  std::string pythonText;  // "weight_decay=0.01,betas=(0.9, 0.999)" as ss_optimizer shows it
};
// Items may also be given as one space-separated string. Unknown keys and bad values are
// std::invalid_argument naming the item.
ParsedOptimizerArgs parseAdamWArgs(const std::vector<std::string>& items);

}  // namespace sinter::train

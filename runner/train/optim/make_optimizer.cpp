#include "train/optim/make_optimizer.h"

#include "train/optim/adafactor.h"
#include "train/optim/adamw.h"

namespace sinter::train {

std::unique_ptr<Optimizer> makeOptimizer(const OptimizerSettings& settings, std::vector<OptimizerGroup> groups,
                                         bool fusedBackwardPass) {
  if (settings.type == "Adafactor")
    return std::make_unique<Adafactor>(std::move(groups), settings.adafactor, /*persistentGradients=*/!fusedBackwardPass,
                                       /*stochasticRounding=*/fusedBackwardPass);
  return std::make_unique<AdamW>(std::move(groups), settings.adamw);
}

}  // namespace sinter::train

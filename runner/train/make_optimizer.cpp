#include "train/make_optimizer.h"

#include <spdlog/spdlog.h>

#include "train/adafactor.h"
#include "train/adamw.h"
#include "train/dadapt_adam.h"
#include "train/dadapt_adam_preprint.h"
#include "train/dadapt_lion.h"
#include "train/prodigy.h"

namespace sinter::train {

std::unique_ptr<Optimizer> makeOptimizer(const OptimizerSettings& settings, std::vector<OptimizerGroup> groups,
                                         bool fusedBackwardPass) {
  if (settings.type == "Adafactor")
    return std::make_unique<Adafactor>(std::move(groups), settings.adafactor, /*persistentGradients=*/!fusedBackwardPass,
                                       /*stochasticRounding=*/fusedBackwardPass);
  if (isDAdaptationType(settings.type)) {
    for (const std::string& warning : dadaptationWarnings(settings.dadaptation, groups)) spdlog::warn("{}: {}", settings.type, warning);
    const DAdaptationHyperparameters& h = settings.dadaptation;
    if (settings.type == "Prodigy") return std::make_unique<Prodigy>(std::move(groups), h);
    if (settings.type == "DAdaptAdam") return std::make_unique<DAdaptAdam>(std::move(groups), h);
    if (settings.type == "DAdaptLion") return std::make_unique<DAdaptLion>(std::move(groups), h);
    return std::make_unique<DAdaptAdamPreprint>(std::move(groups), h, settings.type);  // sd-scripts' DAdaptation
  }
  return std::make_unique<AdamW>(std::move(groups), settings.adamw);
}

}  // namespace sinter::train

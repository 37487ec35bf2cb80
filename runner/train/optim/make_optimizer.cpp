#include "train/optim/make_optimizer.h"

#include <spdlog/spdlog.h>

#include "train/optim/adafactor.h"
#include "train/optim/adamw.h"
#include "train/optim/bitsandbytes_adamw.h"
#include "train/optim/lion.h"
#include "train/optim/sgd_momentum.h"
#include "train/optim/dadapt_adam.h"
#include "train/optim/dadapt_adam_preprint.h"
#include "train/optim/dadapt_lion.h"
#include "train/optim/prodigy.h"

namespace sinter::train {

namespace {

// bitsandbytes' optimizers, Lion and SGD with momentum (what sd-scripts runs for those names).
std::unique_ptr<Optimizer> makeElementwiseOptimizer(const OptimizerSettings& settings, std::vector<OptimizerGroup>& groups) {
  const std::string& t = settings.type;
  if (t.rfind("Paged", 0) == 0)
    spdlog::info("{}: the optimizer states stay in GPU memory (bitsandbytes pages them to host memory under memory "
                 "pressure); the arithmetic is the same",
                 t);
  if (t == "AdamW8bit" || t == "PagedAdamW8bit" || t == "PagedAdamW" || t == "PagedAdamW32bit")
    return std::make_unique<BitsAndBytesAdamW>(std::move(groups), settings.adamw, settings.eightBitFrom());
  if (t == "Lion" || t == "Lion8bit" || t == "PagedLion8bit")
    return std::make_unique<Lion>(std::move(groups), settings.lion, settings.eightBitFrom());
  if (t == "SGDNesterov")
    return std::make_unique<SgdMomentum>(std::move(groups), settings.sgd, /*nesterov=*/true, std::nullopt);
  if (t == "SGDNesterov8bit") {
    spdlog::info("SGDNesterov8bit: bitsandbytes' SGD8bit, as sd-scripts runs it, ignores nesterov: plain (heavy-ball) "
                 "momentum with an 8-bit buffer");
    return std::make_unique<SgdMomentum>(std::move(groups), settings.sgd, /*nesterov=*/false, settings.eightBitFrom());
  }
  return nullptr;
}

}  // namespace

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
  std::unique_ptr<Optimizer> optimizer = makeElementwiseOptimizer(settings, groups);
  if (!optimizer) optimizer = std::make_unique<AdamW>(std::move(groups), settings.adamw);
  // Stepped within the backward pass (fused_optimizer_groups, blockwise_fused_optimizers), each
  // gradient lives only until its parameter's step: drop the persistent buffers, so that the whole
  // model's gradients never exist at once, the first step included.
  if (fusedBackwardPass)
    for (size_t g = 0; g < optimizer->groupCount(); ++g)
      for (torch::Tensor p : optimizer->group(g).params) p.mutable_grad() = torch::Tensor();
  return optimizer;
}

}  // namespace sinter::train

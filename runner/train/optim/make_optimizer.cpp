#include "train/optim/make_optimizer.h"

#include <spdlog/spdlog.h>

#include <functional>
#include <map>
#include <stdexcept>
#include <type_traits>

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

using Factory = std::function<std::unique_ptr<Optimizer>(const OptimizerSettings&, std::vector<OptimizerGroup>&, bool fusedBackwardPass)>;

std::unique_ptr<Optimizer> adamW(const OptimizerSettings& s, std::vector<OptimizerGroup>& groups, bool) {
  return std::make_unique<AdamW>(std::move(groups), s.adamw);
}

// bitsandbytes' AdamW family (8-bit or 32-bit states; paged ones keep theirs on the device).
std::unique_ptr<Optimizer> bitsAndBytesAdamW(const OptimizerSettings& s, std::vector<OptimizerGroup>& groups, bool) {
  return std::make_unique<BitsAndBytesAdamW>(std::move(groups), s.adamw, s.eightBitFrom());
}

std::unique_ptr<Optimizer> lion(const OptimizerSettings& s, std::vector<OptimizerGroup>& groups, bool) {
  return std::make_unique<Lion>(std::move(groups), s.lion, s.eightBitFrom());
}

std::unique_ptr<Optimizer> sgdNesterov(const OptimizerSettings& s, std::vector<OptimizerGroup>& groups, bool) {
  return std::make_unique<SgdMomentum>(std::move(groups), s.sgd, /*nesterov=*/true, std::nullopt);
}

std::unique_ptr<Optimizer> sgd8bit(const OptimizerSettings& s, std::vector<OptimizerGroup>& groups, bool) {
  spdlog::info("SGDNesterov8bit: bitsandbytes' SGD8bit, as sd-scripts runs it, ignores nesterov: plain (heavy-ball) "
               "momentum with an 8-bit buffer");
  return std::make_unique<SgdMomentum>(std::move(groups), s.sgd, /*nesterov=*/false, s.eightBitFrom());
}

std::unique_ptr<Optimizer> adafactor(const OptimizerSettings& s, std::vector<OptimizerGroup>& groups, bool fusedBackwardPass) {
  return std::make_unique<Adafactor>(std::move(groups), s.adafactor, /*persistentGradients=*/!fusedBackwardPass,
                                     /*stochasticRounding=*/fusedBackwardPass);
}

// Prodigy and D-Adaptation's optimizers: sd-scripts' warnings first.
template <typename Class>
Factory dadaptation() {
  return [](const OptimizerSettings& s, std::vector<OptimizerGroup>& groups, bool) -> std::unique_ptr<Optimizer> {
    for (const std::string& warning : dadaptationWarnings(s.dadaptation, groups)) spdlog::warn("{}: {}", s.type, warning);
    if constexpr (std::is_same_v<Class, DAdaptAdamPreprint>) return std::make_unique<Class>(std::move(groups), s.dadaptation, s.type);
    else return std::make_unique<Class>(std::move(groups), s.dadaptation);
  };
}

// Each optimizer table row's class, by the row's name.
const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> f = {
      {"AdamW", adamW},
      {"AdamW8bit", bitsAndBytesAdamW},
      {"PagedAdamW8bit", bitsAndBytesAdamW},
      {"PagedAdamW", bitsAndBytesAdamW},
      {"PagedAdamW32bit", bitsAndBytesAdamW},
      {"Lion", lion},
      {"Lion8bit", lion},
      {"PagedLion8bit", lion},
      {"SGDNesterov", sgdNesterov},
      {"SGDNesterov8bit", sgd8bit},
      {"Adafactor", adafactor},
      {"Prodigy", dadaptation<Prodigy>()},
      {"DAdaptAdam", dadaptation<DAdaptAdam>()},
      {"DAdaptLion", dadaptation<DAdaptLion>()},
      {"DAdaptation", dadaptation<DAdaptAdamPreprint>()},  // sd-scripts' name for the preprint
      {"DAdaptAdamPreprint", dadaptation<DAdaptAdamPreprint>()},
  };
  return f;
}

}  // namespace

std::unique_ptr<Optimizer> makeOptimizer(const OptimizerSettings& settings, std::vector<OptimizerGroup> groups,
                                         bool fusedBackwardPass) {
  const auto factory = factories().find(settings.type);
  if (factory == factories().end()) throw std::logic_error("optimizer type '" + settings.type + "' has no factory in make_optimizer.cpp");
  if (settings.type.rfind("Paged", 0) == 0)
    spdlog::info("{}: the optimizer states stay in GPU memory (bitsandbytes pages them to host memory under memory "
                 "pressure); the arithmetic is the same",
                 settings.type);
  std::unique_ptr<Optimizer> optimizer = factory->second(settings, groups, fusedBackwardPass);
  // Stepped within the backward pass (fused_optimizer_groups, blockwise_fused_optimizers), each
  // gradient lives only until its parameter's step: drop the persistent buffers, so that the whole
  // model's gradients never exist at once, the first step included.
  if (fusedBackwardPass)
    for (size_t g = 0; g < optimizer->groupCount(); ++g)
      for (torch::Tensor p : optimizer->group(g).params) p.mutable_grad() = torch::Tensor();
  return optimizer;
}

std::vector<std::string> builtOptimizerNames() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

}  // namespace sinter::train

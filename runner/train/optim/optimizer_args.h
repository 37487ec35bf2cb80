#pragma once
// optimizer_type and optimizer_args as sd-scripts accepts them (train_util.get_optimizer):
// "key=value" items whose values are Python literals ("weight_decay=0.01", "betas=0.9,0.999").
#include <optional>
#include <string>
#include <vector>

#include "core/optimizer_table.h"
#include "train/optim/dadaptation_args.h"

namespace sinter::train {

struct AdamWHyperparameters {
  double beta1 = 0.9;  // torch.optim.AdamW defaults
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 0.01;
};

// transformers.optimization.Adafactor's arguments and defaults, as sd-scripts passes them (it sets
// relative_step=True when absent, and turns it on when warmup_init is).
struct AdafactorHyperparameters {
  double eps1 = 1e-30;  // added to the squared gradient
  double eps2 = 1e-3;   // the smallest parameter scale
  double clipThreshold = 1.0;
  double decayRate = -0.8;
  std::optional<double> beta1;  // a first moment only when given
  double weightDecay = 0.0;
  bool scaleParameter = true;
  bool relativeStep = true;
  bool warmupInit = false;
};

// lion_pytorch.Lion's and bitsandbytes' Lion8bit's arguments and defaults.
struct LionHyperparameters {
  double beta1 = 0.9;
  double beta2 = 0.99;
  double weightDecay = 0.0;  // decoupled: p *= 1 - lr * weight_decay
};

// torch.optim.SGD's (SGDNesterov) and bitsandbytes' SGD8bit's (SGDNesterov8bit) arguments.
struct SgdHyperparameters {
  double momentum = 0.9;  // sd-scripts sets 0.9 when optimizer_args has none
  double weightDecay = 0.0;  // L2: added to the gradient
};

// optimizer_type matched case-insensitively against the optimizer table's names ("" is AdamW):
// the canonical name ("AdamW"), or std::invalid_argument listing the available ones.
std::string resolveOptimizerType(const std::string& optimizerType);

// optimizer_type and optimizer_args together, checked.
struct OptimizerSettings {
  std::string type;  // canonical: "AdamW", "Adafactor", "AdamW8bit"... (core/optimizer_table.h)
  AdamWHyperparameters adamw;  // also bitsandbytes' AdamW family's (the same defaults)
  AdafactorHyperparameters adafactor;
  LionHyperparameters lion;
  SgdHyperparameters sgd;
  // bitsandbytes' 8-bit optimizers keep 32-bit states for parameters under this many elements.
  long long min8bitSize = 4096;
  DAdaptationHyperparameters dadaptation;  // Prodigy and the DAdapt* types
  std::string pythonText;  // "weight_decay=0.01,betas=(0.9, 0.999)" as ss_optimizer shows it
  // Its row of the optimizer table (core/optimizer_table.h).
  const OptimizerRow& row() const;
  // The class sd-scripts names in ss_optimizer ("torch.optim.adamw.AdamW").
  std::string className() const;
  // Parameters of at least this many elements keep 8-bit states; nullopt for 32-bit optimizers.
  std::optional<long long> eightBitFrom() const;
};
// Items may also be given as one space-separated string. Unknown keys and bad values are
// std::invalid_argument naming the item and the arguments the optimizer has.
OptimizerSettings parseOptimizerSettings(const std::string& optimizerType, const std::vector<std::string>& items);

}  // namespace sinter::train

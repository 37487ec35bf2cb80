#pragma once
// The optimizer optimizer_type names, over the method's parameter groups.
#include <memory>
#include <vector>

#include "train/optim/optimizer.h"
#include "train/optim/optimizer_args.h"

namespace sinter::train {

// fusedBackwardPass: the optimizer steps each parameter during backward (fused_backward.h): no
// persistent gradient buffers, and bf16 parameters rounded stochastically as sd-scripts' fused
// Adafactor rounds them.
std::unique_ptr<Optimizer> makeOptimizer(const OptimizerSettings& settings, std::vector<OptimizerGroup> groups,
                                         bool fusedBackwardPass);

}  // namespace sinter::train

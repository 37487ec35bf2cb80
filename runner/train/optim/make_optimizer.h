#pragma once
// The optimizer optimizer_type names, over the method's parameter groups: each row of the optimizer
// table (core/optimizer_table.h) built as its class.
#include <memory>
#include <string>
#include <vector>

#include "train/optim/optimizer.h"
#include "train/optim/optimizer_args.h"

namespace sinter::train {

// fusedBackwardPass: the optimizer steps each parameter during backward (fused_backward.h): no
// persistent gradient buffers, and bf16 parameters rounded stochastically as sd-scripts' fused
// Adafactor rounds them.
std::unique_ptr<Optimizer> makeOptimizer(const OptimizerSettings& settings, std::vector<OptimizerGroup> groups,
                                         bool fusedBackwardPass);
// The optimizer names makeOptimizer builds (a test keeps them the optimizer table's).
std::vector<std::string> builtOptimizerNames();

}  // namespace sinter::train

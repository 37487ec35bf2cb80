#pragma once
// What keeps a run's training step out of a CUDA graph, from its config: the same facts for the
// run and for --dry_run, so both print the same compile plan.
#include <torch/torch.h>

#include "compile/compile_plan.h"
#include "core/config.h"

namespace sinter::train {

// `ranks`: processes of a data-parallel run; 0 reads torchrun's environment.
compile::CaptureFacts captureFacts(const Config& config, const torch::Device& device, int ranks = 0);

}  // namespace sinter::train

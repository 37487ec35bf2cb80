#pragma once
// sinter-runner's tool modes: random checkpoints, the demo dataset and tokenizer, the benchmark.
#include <optional>

#include "core/argv.h"

namespace sinter::runner {

// Whether the arguments ask for a tool rather than a training run.
bool isTool(const ParsedArgs& args);

// Runs the tool the arguments ask for and returns its exit code; nullopt when none was asked for.
std::optional<int> runTool(const ParsedArgs& args, const Config& config);

}  // namespace sinter::runner

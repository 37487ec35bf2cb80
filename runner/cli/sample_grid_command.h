#pragma once
// `sinter-runner --config_file RUN.toml --sample_grid OUT.png [FILE ...]` (the checkpoint grid,
// train/loop/checkpoint_grid.h): its arguments on the command line, and the command.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/argv.h"
#include "core/config.h"
#include "train/base/event_sink.h"
#include "train/loop/checkpoint_grid.h"

namespace sinter::runner {

// Takes `--sample_grid OUT.png FILE ...` (or `--sample_grid=OUT.png FILE ...`) out of `args`: the
// PNG, then the saved files up to the next --option, as the registry's list options read
// (`--network_args a=1 b=2`). nullopt when the flag is not there. std::invalid_argument for the flag
// without its PNG, or given twice.
std::optional<train::CheckpointGridRequest> takeSampleGridArguments(std::vector<std::string>& args);

// A runner flag beside --sample_grid other than --config_file, --events and --strict (every other is
// a mode of its own), as "--dry_run"; "" when there is none.
std::string modeBesideSampleGrid(const ParsedArgs& parsed);

// The grid of the run `config` describes: the same checks as a run's (preflightRun) before any
// model loads; their warnings are the training run's and are not repeated. Exit code as
// renderCheckpointGrid's.
int runSampleGridCommand(const Config& config, const train::CheckpointGridRequest& request, train::EventSink& events);

}  // namespace sinter::runner

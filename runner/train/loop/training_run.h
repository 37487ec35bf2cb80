#pragma once
// A training run from a checked config to its saved files (DESIGN.md §3-4).
#include "core/config.h"
#include "train/base/event_sink.h"
#include "train/loop/run_preflight.h"

namespace sinter::train {

// Trains a run that passed preflightRun (its diagnostics already reported); returns the runner's
// exit code (0 completed or stopped, 1 failed during training, 2 bad input found before the first
// step). Errors are logged and sent as events. `controlFromStdin` (--control stdin): rank 0 reads
// commands on stdin during the run (run_controls.h).
int runTraining(RunPreflight preflight, EventSink& events, bool controlFromStdin = false);

}  // namespace sinter::train

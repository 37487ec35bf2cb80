#pragma once
// The dataset check (data/dataset_check.h) where the runner runs it: `sinter-runner --check_dataset`
// (the dataset read as a run reads it, every image decoded, the report printed and sent as a
// `dataset_check` event), and at every run's start (headers and content hashes only).
#include <functional>
#include <vector>

#include "core/config.h"
#include "train/base/event_sink.h"
#include "train/loop/run_preflight.h"

namespace sinter::runner {

// `config` has passed validateConfig. Exit 0 when a run would take the dataset (whatever the
// findings), 2 when it would refuse it: `refuse` reports a config or dataset that cannot be read
// and gives its exit code; refusals found by the check itself are reported here.
int runDatasetCheckCommand(const Config& config, train::EventSink& events,
                           const std::function<int(const std::vector<Diagnostic>&)>& refuse);

// At a run's start, on the dataset its preflight read (rank 0 only: it speaks for every rank).
// Logs the findings beyond the preflight's own warnings and emits the `dataset_check` event.
void checkDatasetAtRunStart(const train::RunPreflight& preflight, train::EventSink& events);

}  // namespace sinter::runner

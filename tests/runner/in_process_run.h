#pragma once
// A run's family and method parts built in process from a config on the CPU, as the runner builds
// them (preflight, run context, parts), for tests that drive the parts themselves.
#include <chrono>
#include <optional>

#include "train/loop/run_preflight.h"
#include "train/loop/training_table.h"

namespace sinter::test {

struct InProcessRun {
  explicit InProcessRun(const Config& config) : preflight(train::preflightRun(config)) {}

  // The parts for `tab`; the caller has checked preflight.ok().
  train::TrainingParts makeParts(Tab tab) {
    run.emplace(train::RunContext{preflight.resolved, torch::kCPU, train::PrecisionPlan{}, 1, events,
                                  std::chrono::steady_clock::now()});
    return train::makeTrainingParts(*run, *preflight.resolved.family(), tab);
  }

  train::RunPreflight preflight;
  train::EventSink events{false};
  std::optional<train::RunContext> run;
};

}  // namespace sinter::test

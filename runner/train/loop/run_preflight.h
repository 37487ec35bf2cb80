#pragma once
// Every check a run makes on its config and inputs, done before anything expensive (loading
// models, caching latents). `--dry_run` calls the same function, so a config that passes a dry
// run is one that the run accepts, and a run that is going to be refused is refused in seconds.
#include <optional>
#include <vector>

#include "compile/compile_plan.h"
#include "core/config.h"
#include "core/vram_plan.h"
#include "data/dataset.h"

namespace sinter::train {

struct RunPreflight {
  // Errors and warnings, each naming its option (and the file and line where it was set).
  std::vector<Diagnostic> diagnostics;
  // The config as the run uses it: model_family detected, network_module filled in.
  Config resolved;
  // The images found, when the dataset settings were valid (the run trains on these).
  std::optional<data::Dataset> dataset;
  // What the compile settings turn on for this config on this machine (when the values parsed).
  std::optional<compile::CompilePlan> compilePlan;
  // vram_budget_gb's plan (base/vram_budget.h), already applied to `resolved`; nullopt when unset.
  std::optional<VramPlan> vramPlan;

  bool ok() const { return !hasErrors(diagnostics); }
};

// The tokenizer folders the run reads, one "<option>: <folder>" each ("bundled with Sinter" where it is
// the one that ships), for the log, the dry run and the start event.
std::vector<std::string> tokenizerLines(const Config& resolved);

// `config` has passed validateConfig (keys, types, ranges, cross-field rules). `ranks`: how many
// processes will train (--nproc_per_node); 0 reads torchrun's environment.
RunPreflight preflightRun(const Config& config, int ranks = 0);

// What the compile settings turn on for `config` of `family` on this machine: the dry run's plan,
// which `sinter-runner --compile_plan` prints without the dry run's file checks (the app's panel).
compile::CompilePlan compilePlanFor(const Config& config, std::optional<Family> family, int ranks = 0);

}  // namespace sinter::train

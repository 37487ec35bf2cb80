#pragma once
// The compile plan: from the resolved compile request and the model family, what the runner turns
// on, which regions it would capture and what is unavailable in this build and why (DESIGN.md §6).
// Built and rendered in one place, for the run's log and `compile_plan` event and for --dry_run.
#include <string>
#include <vector>

#include "core/compile_settings.h"
#include "core/config.h"
#include "core/events.h"

namespace sinter::compile {

struct CompilePlan {
  CompileRequest request;
  std::string model;                     // "U-Net" (SDXL), "DiT model" (FLUX), as sd-scripts names them
  std::vector<std::string> mechanisms;   // what is on
  std::vector<std::string> regions;      // what is captured
  std::vector<std::string> unavailable;  // "what: why"

  events::CompilePlan event() const;
  // The log line sd-scripts users know ("Compiling U-Net with torch.compile: ..."), or "compile: off".
  std::string headline() const;
  // Every line of the plan, for the log and --dry_run (the request's notes are warnings of their own).
  std::vector<std::string> lines() const;
};

CompilePlan planCompile(const Config& config, std::optional<Family> family);

}  // namespace sinter::compile

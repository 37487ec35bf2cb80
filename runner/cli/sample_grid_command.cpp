#include "cli/sample_grid_command.h"

#include <spdlog/spdlog.h>

#include "core/exit_codes.h"
#include "train/loop/run_preflight.h"

namespace sinter::runner {

namespace {

const std::string kSampleGridFlag = "--sample_grid";

}  // namespace

std::optional<train::CheckpointGridRequest> takeSampleGridArguments(std::vector<std::string>& args) {
  std::optional<train::CheckpointGridRequest> request;
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool withValue = a.rfind(kSampleGridFlag + "=", 0) == 0;
    if (a != kSampleGridFlag && !withValue) {
      rest.push_back(a);
      continue;
    }
    if (request) throw std::invalid_argument("--sample_grid is given twice; give it once, with every file after its PNG");
    request.emplace();
    if (withValue) {
      request->output = a.substr(kSampleGridFlag.size() + 1);
    } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
      request->output = args[++i];
    }
    if (request->output.empty())
      throw std::invalid_argument("--sample_grid needs the PNG to write: --sample_grid OUT.png [FILE ...] (the saved files after it)");
    while (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) request->files.push_back(args[++i]);
  }
  args = std::move(rest);
  return request;
}

std::string modeBesideSampleGrid(const ParsedArgs& parsed) {
  // What goes with it: the config and how the run reports; every other runner flag is a mode of its own.
  auto goesWith = [](const std::string& name) { return name == "config_file" || name == "events" || name == "strict"; };
  for (const std::string& flag : parsed.extraFlags)
    if (!goesWith(flag)) return "--" + flag;
  for (const auto& [option, value] : parsed.extraValues)
    if (!goesWith(option)) return "--" + option;
  return "";
}

int runSampleGridCommand(const Config& config, const train::CheckpointGridRequest& request, train::EventSink& events) {
  train::RunPreflight preflight = train::preflightRun(config);
  if (!preflight.ok()) {
    for (const Diagnostic& d : preflight.diagnostics) {
      if (d.severity != Severity::Error) continue;
      spdlog::error("{}", d.format());
      events.emit(events::Error{d.format()});
    }
    events.emit(events::Done{"failed", 0, 0});
    return kExitBadInput;
  }
  return train::renderCheckpointGrid(preflight, request, events);
}

}  // namespace sinter::runner

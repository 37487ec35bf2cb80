#include "cli/dataset_check_command.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <sstream>

#include "core/exit_codes.h"
#include "data/dataset_check.h"
#include "data/dataset_check_text.h"
#include "data/dataset_settings.h"
#include "distributed/torchrun_environment.h"
#include "train/parts/preflight_checks.h"

namespace sinter::runner {

namespace {

// The option a dataset problem is reported on, as the run's preflight reports it.
std::string datasetKey(const Config& config) { return config.getString("dataset_config").empty() ? "train_data_dir" : "dataset_config"; }

// The check's own findings: the log and `warning` events, as every other warning.
void reportFindings(const std::vector<std::string>& warnings, train::EventSink& events) {
  for (const std::string& w : warnings) {
    spdlog::warn("dataset check: {}", w);
    events.emit(events::Warning{"dataset check: " + w});
  }
}

// The report for a person: on stdout, unless stdout carries the events (then in the log).
void printReport(const events::DatasetCheck& report, const train::EventSink& events) {
  const std::string text = data::datasetCheckText(report);
  if (!events.jsonl()) {
    std::cout << text;
    return;
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) spdlog::info("{}", line);
}

}  // namespace

int runDatasetCheckCommand(const Config& config, train::EventSink& events,
                           const std::function<int(const std::vector<Diagnostic>&)>& refuse) {
  std::vector<Diagnostic> diagnostics;
  train::PreflightChecks k(config, diagnostics);
  const std::string key = datasetKey(config);
  std::vector<std::string> readingWarnings;
  std::optional<data::Dataset> dataset;
  if (config.getString("train_data_dir").empty() && config.getString("dataset_config").empty()) {
    k.error("train_data_dir", "no training data: set train_data_dir or dataset_config");
  } else {
    // As the run's preflight reads it (train/loop/run_preflight.cpp), but a caption file the run
    // refuses is one finding among the others rather than the end of the reading.
    k.parse(key, [&] {
      std::vector<data::DatasetSettings> settings = data::datasetSettingsFromConfig(config, readingWarnings);
      data::DiscoveryOptions discovery = data::DiscoveryOptions::fromConfig(config);
      discovery.inspectOnly = true;
      dataset = data::buildDataset(std::move(settings), discovery);
    });
  }
  if (!dataset) return refuse(diagnostics);
  readingWarnings.insert(readingWarnings.end(), dataset->warnings.begin(), dataset->warnings.end());
  for (const std::string& w : readingWarnings) k.warning(key, w);
  for (const data::SkippedImage& s : dataset->skipped) k.warning(key, "skipped " + s.path + ": " + s.reason);
  for (const Diagnostic& d : diagnostics) {
    spdlog::warn("{}", d.format());
    events.emit(events::Warning{d.format()});
  }

  data::DatasetCheckOptions options;
  options.decodePixels = true;
  options.workers = data::DiscoveryOptions::fromConfig(config).workers;
  const data::DatasetCheckResult result = data::checkDataset(*dataset, readingWarnings, options);
  reportFindings(result.warnings, events);
  events.emit(result.report);
  printReport(result.report, events);
  if (result.report.refusals.empty()) return kExitOk;
  for (const std::string& why : result.report.refusals) {
    spdlog::error("{}", why);
    events.emit(events::Error{why});
  }
  return kExitBadInput;
}

void checkDatasetAtRunStart(const train::RunPreflight& preflight, train::EventSink& events) {
  if (!preflight.dataset) return;
  try {
    if (const auto env = distributed::readTorchrunEnvironment(); env && env->rank != 0) return;
  } catch (const std::invalid_argument&) {
    return;  // the run reports a bad launch environment
  }
  // The preflight's warnings on the dataset are what reading it said; the files it skipped are in
  // the report already, each named.
  const Config& config = preflight.resolved;
  const std::string key = datasetKey(config);
  std::vector<std::string> readingWarnings;
  for (const Diagnostic& d : preflight.diagnostics)
    if (d.severity == Severity::Warning && d.key == key && d.message.rfind("skipped ", 0) != 0) readingWarnings.push_back(d.message);
  // Hashing reads only the files whose size another image shares (few, in a dataset of compressed
  // images), so it stays on at every start; decoding every image does not (DESIGN.md §3).
  data::DatasetCheckOptions options;
  options.workers = data::DiscoveryOptions::fromConfig(config).workers;
  const auto start = std::chrono::steady_clock::now();
  const data::DatasetCheckResult result = data::checkDataset(*preflight.dataset, readingWarnings, options);
  spdlog::info("dataset check: {} image files, {} of them hashed for duplicates, in {:.2f} s", result.report.images, result.filesHashed,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  reportFindings(result.warnings, events);
  events.emit(result.report);
}

}  // namespace sinter::runner

#include "cli/queue_command.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>

#include "cli/queue_processes.h"
#include "core/exit_codes.h"
#include "core/run_queue.h"
#include "core/saved_train_state.h"
#include "core/toml_config.h"
#include "train/loop/output_lock.h"
#include "train/loop/stop_request.h"

namespace sinter::runner {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kQueueMessageLimit = 400;  // a run's failure in the file: its gist, not its log

std::string clippedQueueMessage(std::string text) {
  if (text.size() > kQueueMessageLimit) text = text.substr(0, kQueueMessageLimit) + "…";
  return text;
}

// Where an entry's run writes, as the run reads it: its output_dir (the entry's, else its config's)
// from its working folder, and its output_name; empty when the config cannot be read.
struct QueuedRunOutput {
  std::string outputDir, outputName;
};

std::string queueEntryWorkingDir(const std::string& queueFile, const QueueEntry& entry) {
  return entry.workingDir.empty() ? fs::current_path().string() : resolveQueuePath(queueFile, entry.workingDir);
}

QueuedRunOutput queuedRunOutput(const std::string& queueFile, const QueueEntry& entry) {
  QueuedRunOutput out;
  std::string outputDir = entry.outputDir;
  try {
    const LoadResult loaded = loadConfigFile(resolveQueuePath(queueFile, entry.config));
    if (outputDir.empty()) outputDir = loaded.config.getString("output_dir");
    out.outputName = runOutputName(loaded.config);
  } catch (const std::exception&) {  // the run itself says what is wrong with its config
    out.outputName = runOutputName(Config{});
  }
  if (!outputDir.empty())
    out.outputDir = fs::path(outputDir).is_absolute() ? outputDir : (fs::path(queueEntryWorkingDir(queueFile, entry)) / outputDir).string();
  return out;
}

std::optional<SavedTrainState> lastStateOf(const std::string& queueFile, const QueueEntry& entry) {
  const QueuedRunOutput out = queuedRunOutput(queueFile, entry);
  if (out.outputDir.empty()) return std::nullopt;
  return findLastSavedTrainState(out.outputDir, out.outputName);
}

std::string resumeAdvice(const SavedTrainState& state) {
  return "its last saved state is " + state.folder + " (step " + std::to_string(state.step) + "); set resume = \"" + state.folder +
         "\" and status = \"pending\" to go on from it";
}

// The queue file, read again before each change so that entries added or edited meanwhile (by hand,
// while the queue runs) are kept; each change written at once, atomically.
class QueueFileUpdates {
 public:
  explicit QueueFileUpdates(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  RunQueue read() const { return loadRunQueueFile(path_); }
  // Changes the entry at `index` that names `config` (found again by its config should the file's
  // order have changed); false when it is no longer in the file.
  bool update(std::size_t index, const std::string& config, const std::function<void(QueueEntry&)>& change) const {
    RunQueue queue = read();
    std::optional<std::size_t> at;
    if (index < queue.entries.size() && queue.entries[index].config == config) at = index;
    for (std::size_t i = 0; !at && i < queue.entries.size(); ++i)
      if (queue.entries[i].config == config && queue.entries[i].status == QueueStatus::Running) at = i;
    if (!at) return false;
    change(queue.entries[*at]);
    saveRunQueueFile(path_, queue);
    return true;
  }

 private:
  std::string path_;
};

// A config or working_dir that is not there, found before anything runs.
std::vector<std::string> missingQueueFiles(const std::string& queueFile, const RunQueue& queue) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < queue.entries.size(); ++i) {
    const QueueEntry& entry = queue.entries[i];
    if (entry.status != QueueStatus::Pending) continue;
    const std::string where = queueFile + ": " + describeQueueEntry(queue, i) + ": ";
    const std::string config = resolveQueuePath(queueFile, entry.config);
    std::error_code ec;
    if (!fs::is_regular_file(config, ec)) problems.push_back(where + "config " + config + " is not there");
    if (!entry.workingDir.empty() && !fs::is_directory(resolveQueuePath(queueFile, entry.workingDir), ec))
      problems.push_back(where + "working_dir " + resolveQueuePath(queueFile, entry.workingDir) + " is not a folder");
  }
  return problems;
}

struct QueuedRunResult {
  QueueStatus status = QueueStatus::Failed;
  std::string message;
};

QueuedRunResult judgeQueuedRun(const QueuedRunOutcome& outcome, const std::string& queueFile, const QueueEntry& entry) {
  QueuedRunResult result;
  const std::string doneStatus = outcome.done ? outcome.done->status : std::string();
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", outcome.done ? outcome.done->seconds : 0.0);
  if (outcome.exitCode == 0 && doneStatus == "stopped") {
    result.status = QueueStatus::Interrupted;
    result.message = "stopped on request at step " + std::to_string(outcome.done->steps);
    if (const auto state = lastStateOf(queueFile, entry)) result.message += "; " + resumeAdvice(*state);
  } else if (outcome.exitCode == 0 && doneStatus != "failed") {
    result.status = QueueStatus::Done;
    result.message = outcome.done ? "completed: " + std::to_string(outcome.done->steps) + " steps in " + seconds + " s" : "exit code 0";
  } else {
    result.status = QueueStatus::Failed;
    result.message = outcome.endedBy.empty() ? "exit code " + std::to_string(outcome.exitCode) : "the run " + outcome.endedBy;
    if (!outcome.lastError.empty()) result.message += ": " + outcome.lastError;
  }
  result.message = clippedQueueMessage(result.message);
  return result;
}

void printQueueSummary(const std::string& queueFile, const RunQueue& queue) {
  int counts[5] = {0, 0, 0, 0, 0};
  for (const QueueEntry& entry : queue.entries) ++counts[static_cast<int>(entry.status)];
  std::string totals;
  for (QueueStatus s : {QueueStatus::Done, QueueStatus::Failed, QueueStatus::Interrupted, QueueStatus::Pending, QueueStatus::Running})
    if (counts[static_cast<int>(s)] > 0) totals += (totals.empty() ? "" : ", ") + std::to_string(counts[static_cast<int>(s)]) + " " + toString(s);
  spdlog::info("queue {}: {} run(s): {}", queueFile, queue.entries.size(), totals.empty() ? "none" : totals);
  for (std::size_t i = 0; i < queue.entries.size(); ++i) {
    const QueueEntry& entry = queue.entries[i];
    spdlog::info("  {} {}: {}{}", describeQueueEntry(queue, i), entry.config, toString(entry.status),
                 entry.message.empty() ? std::string() : " (" + entry.message + ")");
  }
}

void runQueueEnd(const std::string& queueFile, const RunQueue& queue) {
  if (queue.onEndCommand.empty()) return;
  int counts[5] = {0, 0, 0, 0, 0};
  for (const QueueEntry& entry : queue.entries) ++counts[static_cast<int>(entry.status)];
  const std::vector<std::string> environment{
      "SINTER_QUEUE_FILE=" + fs::absolute(queueFile).string(),
      "SINTER_QUEUE_DONE=" + std::to_string(counts[static_cast<int>(QueueStatus::Done)]),
      "SINTER_QUEUE_FAILED=" + std::to_string(counts[static_cast<int>(QueueStatus::Failed)]),
      "SINTER_QUEUE_INTERRUPTED=" + std::to_string(counts[static_cast<int>(QueueStatus::Interrupted)]),
      "SINTER_QUEUE_PENDING=" + std::to_string(counts[static_cast<int>(QueueStatus::Pending)])};
  std::string why;
  const int code = runQueueEndCommand(queue.onEndCommand, environment, &why);
  if (code == 0) spdlog::info("on_end_command {} ran", queue.onEndCommand.front());
  else if (code > 0) spdlog::warn("on_end_command {} exited with code {}", queue.onEndCommand.front(), code);
  else spdlog::warn("on_end_command {}: {}", queue.onEndCommand.front(), why);
}

int runQueueLocked(const QueueCommand& command) {
  const QueueFileUpdates file(command.queueFile);
  RunQueue queue = file.read();
  if (queue.entries.empty()) {
    spdlog::error("{}: the queue has no runs (each one a [[run]] table with config = \"FILE.toml\")", command.queueFile);
    return kExitBadInput;
  }
  // Runs a runner left `running` ended with it (this process holds the queue's lock now).
  if (markInterruptedRuns(queue, "sinter-runner ended during this run") > 0) {
    for (QueueEntry& entry : queue.entries)
      if (entry.status == QueueStatus::Interrupted && entry.message == "sinter-runner ended during this run")
        if (const auto state = lastStateOf(command.queueFile, entry)) entry.message += "; " + resumeAdvice(*state);
    saveRunQueueFile(command.queueFile, queue);
  }
  for (std::size_t i = 0; i < queue.entries.size(); ++i)
    if (queue.entries[i].status == QueueStatus::Interrupted)
      spdlog::warn("{}: {} ({}) was interrupted and is not run again: {}", command.queueFile, describeQueueEntry(queue, i),
                   queue.entries[i].config, queue.entries[i].message);
  if (const std::vector<std::string> missing = missingQueueFiles(command.queueFile, queue); !missing.empty()) {
    for (const std::string& problem : missing) spdlog::error("{}", problem);
    spdlog::error("nothing was run");
    return kExitBadInput;
  }
  if (!nextPendingRun(queue)) {
    spdlog::info("{}: no pending runs", command.queueFile);
    printQueueSummary(command.queueFile, queue);
    return kExitOk;
  }

  bool anyFailed = false, endedByStop = false;
  for (;;) {
    if (train::stopRequested()) {
      endedByStop = true;
      break;
    }
    queue = file.read();
    const std::optional<std::size_t> next = nextPendingRun(queue);
    if (!next) break;
    const std::size_t index = *next;
    QueueEntry entry = queue.entries[index];
    // Absolute: the run may start in another folder (working_dir).
    const std::string config = fs::absolute(resolveQueuePath(command.queueFile, entry.config)).lexically_normal().string();
    const std::string workingDir =
        entry.workingDir.empty() ? std::string() : fs::absolute(resolveQueuePath(command.queueFile, entry.workingDir)).lexically_normal().string();
    QueuedRunResult result;
    std::error_code ec;
    if (!fs::is_regular_file(config, ec) || (!workingDir.empty() && !fs::is_directory(workingDir, ec))) {
      // An entry added while the queue ran, naming what is not there.
      result.message = !fs::is_regular_file(config, ec) ? "config " + config + " is not there"
                                                        : "working_dir " + workingDir + " is not a folder";
      spdlog::error("{}: {}: {}", command.queueFile, describeQueueEntry(queue, index), result.message);
    } else {
      if (entry.outputDir.empty()) {
        // Kept with the entry: where to look for its states should it be interrupted.
        try {
          entry.outputDir = loadConfigFile(config).config.getString("output_dir");
        } catch (const std::exception&) {
        }
      }
      file.update(index, entry.config, [&](QueueEntry& e) {
        e.status = QueueStatus::Running;
        e.outputDir = entry.outputDir;
        e.message.clear();
      });
      spdlog::info("queue {}: {} ({}) starting", command.queueFile, describeQueueEntry(queue, index), entry.config);
      QueuedRunLaunch launch;
      launch.executable = command.executable;
      launch.arguments = {"--config_file", config, "--events", "jsonl"};
      launch.arguments.insert(launch.arguments.end(), command.runArguments.begin(), command.runArguments.end());
      if (!entry.outputDir.empty()) launch.arguments.insert(launch.arguments.end(), {"--output_dir", entry.outputDir});
      if (!entry.resume.empty()) launch.arguments.insert(launch.arguments.end(), {"--resume", entry.resume});
      launch.workingDir = workingDir;
      launch.forwardEvents = command.forwardEvents;
      try {
        result = judgeQueuedRun(runQueuedRun(launch), command.queueFile, entry);
      } catch (const std::exception& e) {
        result.message = e.what();
      }
    }
    const bool found = file.update(index, entry.config, [&](QueueEntry& e) {
      e.status = result.status;
      e.message = result.message;
      if (!entry.outputDir.empty()) e.outputDir = entry.outputDir;
    });
    if (!found)
      spdlog::warn("{}: {} ({}) is no longer in the file: its status ({}) is not written", command.queueFile,
                   describeQueueEntry(queue, index), entry.config, toString(result.status));
    const std::string line = describeQueueEntry(queue, index) + " (" + entry.config + "): " + toString(result.status) + ": " + result.message;
    if (result.status == QueueStatus::Failed) spdlog::error("queue {}: {}", command.queueFile, line);
    else spdlog::info("queue {}: {}", command.queueFile, line);
    if (result.status == QueueStatus::Failed) {
      anyFailed = true;
      if (queue.onFailure == QueueOnFailure::Stop) {
        spdlog::error("queue {}: on_failure = \"stop\": the runs after it are left pending", command.queueFile);
        break;
      }
    }
  }
  queue = file.read();
  printQueueSummary(command.queueFile, queue);
  if (endedByStop || train::stopRequested()) spdlog::info("queue {}: stopped on request; the runs left are pending", command.queueFile);
  else runQueueEnd(command.queueFile, queue);
  return anyFailed ? kExitTrainingFailed : kExitOk;
}

}  // namespace

int runQueueCommand(const QueueCommand& command) {
  std::error_code ec;
  if (!fs::is_regular_file(command.queueFile, ec)) {
    spdlog::error("--queue {}: {}", command.queueFile, fs::exists(command.queueFile, ec) ? "not a file" : "no such file");
    return kExitBadInput;
  }
  try {
    // `<queue file>.lock` (the run's own output lock, train/loop/output_lock.h): a second runner on
    // the same file is refused, naming the holder's pid.
    std::optional<train::OutputLock> lock;
    try {
      lock.emplace(command.queueFile + ".lock");
    } catch (const train::OutputLockHeld& e) {
      throw std::runtime_error(std::string("another sinter-runner runs this queue: ") + e.what());
    }
    return runQueueLocked(command);
  } catch (const ConfigError& e) {
    for (const Diagnostic& d : e.diagnostics()) spdlog::error("{}", d.format());
    return kExitBadInput;
  } catch (const std::exception& e) {
    spdlog::error("queue {}: {}", command.queueFile, e.what());
    return kExitBadInput;
  }
}

}  // namespace sinter::runner

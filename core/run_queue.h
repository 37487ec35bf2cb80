#pragma once
// A run queue (DESIGN.md §3, "Run queues"): configs run one after another, read and written by the
// app's Queue panel and by `sinter-runner --queue FILE` alike. Its TOML file:
//
//   on_failure = "continue"   # or "stop": whether the runs after a failed one go on
//   on_end_command = ["notify-send", "Sinter", "the queue has ended"]   # optional: run at the end
//
//   [[run]]
//   config = "runs/0001.toml"  # the run's config, relative to the queue file's folder
//   status = "pending"         # pending | running | done | failed | interrupted
//   output_dir = "/data/out"   # optional: the run's output_dir (given to it as --output_dir)
//   working_dir = "/data"      # optional: the folder it starts in (its config's relative paths)
//   resume = "/data/out/x-step00000010-state"   # optional: the state it resumes (--resume)
//   message = "exit code 2"    # optional: how its last attempt ended, in words
//
// The programs rewrite the whole file (atomically) as statuses change: comments are not kept.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostics.h"  // ConfigError

namespace sinter {

enum class QueueStatus { Pending, Running, Done, Failed, Interrupted };
enum class QueueOnFailure { Continue, Stop };

const char* toString(QueueStatus status);
std::optional<QueueStatus> queueStatusFromString(const std::string& text);

struct QueueEntry {
  std::string config;  // as written in the file (relative to the queue file's folder, or absolute)
  QueueStatus status = QueueStatus::Pending;
  std::string outputDir;   // empty: the config's own
  std::string workingDir;  // empty: the folder the program was started in
  std::string resume;      // empty: a fresh start
  std::string message;
  int line = 0;  // its [[run]] header in the file read; 0 for an entry made since
};

struct RunQueue {
  QueueOnFailure onFailure = QueueOnFailure::Continue;
  std::vector<std::string> onEndCommand;  // program and arguments (never a shell); empty: none
  std::vector<QueueEntry> entries;
};

// Reads a queue file's text. A TOML error, an unknown key (in the file or in an entry: this is
// Sinter's own format, so a misspelt key would otherwise be lost), a wrong type, an unknown
// status or on_failure, or an entry without `config` throws ConfigError naming `fileName`, the
// line and the entry ("run 2"). A file without entries is an empty queue.
RunQueue parseRunQueue(const std::string& text, const std::string& fileName);
RunQueue loadRunQueueFile(const std::string& path);  // a file that cannot be read: ConfigError too

// The queue as TOML, in the layout above (unset optional keys left out).
std::string writeRunQueue(const RunQueue& queue);
// Written atomically (core/atomic_file.h). Throws std::runtime_error naming the path.
void saveRunQueueFile(const std::string& path, const RunQueue& queue);

// An entry's path (config, working_dir) as the programs read it: relative to the queue file's
// folder, unless absolute.
std::string resolveQueuePath(const std::string& queueFile, const std::string& path);

// Entries left `running` by a program that ended during their run become `interrupted`, with
// `message`; how many did.
int markInterruptedRuns(RunQueue& queue, const std::string& message);

// The first pending entry at or after `from`, or nullopt.
std::optional<std::size_t> nextPendingRun(const RunQueue& queue, std::size_t from = 0);

// "run 2 (line 9)" or "run 2": an entry named in messages, counted from 1 as the file lists them.
std::string describeQueueEntry(const RunQueue& queue, std::size_t index);

}  // namespace sinter

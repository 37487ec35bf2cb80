#pragma once
// The processes of `sinter-runner --queue` (queue_command.h): each run of the queue in a process of
// its own (the runner started again on the run's config), and the queue's end command.
#include <optional>
#include <string>
#include <vector>

#include "core/events.h"

namespace sinter::runner {

struct QueuedRunLaunch {
  std::string executable;              // the runner itself
  std::vector<std::string> arguments;  // with --events jsonl: its outcome is read from its events
  std::string workingDir;              // empty: this process's own
  bool forwardEvents = false;          // copy its event stream to this process's stdout
};

struct QueuedRunOutcome {
  int exitCode = -1;              // its exit code; -1 when a signal ended it
  std::string endedBy;            // "was killed by signal 9 (Killed)", or empty when it exited
  std::optional<events::Done> done;  // its done event, when it sent one
  std::string lastError;          // its last error event's message
  bool stopForwarded = false;     // this process was asked to stop and passed the stop on
};

// Runs one queued run to its end. The run has a process group of its own, so a terminal's Ctrl-C
// reaches this process alone, which passes one stop (SIGTERM) on: the run saves and stops, as one
// run stopped on its own does. Should this process die, the run is sent SIGTERM (it saves). Throws
// std::runtime_error when the process cannot be started.
QueuedRunOutcome runQueuedRun(const QueuedRunLaunch& launch);

// Runs the queue's end command (program and arguments; the program looked up in PATH, never a
// shell) with `environment` added, and waits for it; its exit code, or -1 when it could not be
// started or a signal ended it (`why` says which).
int runQueueEndCommand(const std::vector<std::string>& command, const std::vector<std::string>& environment, std::string* why);

}  // namespace sinter::runner

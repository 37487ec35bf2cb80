#pragma once
// `sinter-runner --queue FILE` (DESIGN.md §3, "Run queues"): the queue's pending runs one after
// another, each a runner process of its own, their statuses written to the file as they go.
#include <string>
#include <vector>

namespace sinter::runner {

struct QueueCommand {
  std::string queueFile;
  std::string executable;                 // the runner itself, started for each run
  std::vector<std::string> runArguments;  // given to every run (--strict, --nproc_per_node N)
  bool forwardEvents = false;             // --events jsonl: the runs' events on stdout, one run after another
};

// 0 when no run of this invocation failed (a stop on request included), 1 when one did, 2 for a
// queue file that cannot be read or names a config or working_dir that is not there (nothing run).
int runQueueCommand(const QueueCommand& command);

}  // namespace sinter::runner

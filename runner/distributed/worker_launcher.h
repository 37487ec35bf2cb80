#pragma once
// `sinter-runner --nproc_per_node N`: starts N copies of the runner, one per GPU (or N processes on
// the CPU), each with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT), and supervises them as torchrun does: a stop signal goes to every
// worker (rank 0 decides the step they stop after, rank_agreement.h); when one worker fails the
// others are told so (SIGUSR1: they exit with 1, after the save they may be writing; SIGKILL after a
// grace period) and the launcher fails with it.
// Rank 0's stdout (the event stream) passes through; the others' goes nowhere.
#include <chrono>
#include <string>
#include <vector>

namespace sinter::distributed {

constexpr int kMaxWorkers = 1024;  // processes one launcher starts at most

struct WorkerLaunch {
  std::string executable;              // the runner itself
  std::vector<std::string> arguments;  // every worker's, without --nproc_per_node
  int processes = 2;
  bool eventsOnStdout = false;  // --events jsonl: a run whose rank 0 died without its done event still ends with one
  std::chrono::seconds grace{120};  // from SIGUSR1 to SIGKILL when a worker has failed
};

// Runs the workers to their end: 0 when all exit 0; else the first failed worker's exit code
// (1 when a signal ended it).
int launchWorkers(const WorkerLaunch& launch);

// A TCP port on 127.0.0.1 free at the moment of asking (MASTER_PORT for a one-host launch).
int freeLocalPort();

}  // namespace sinter::distributed

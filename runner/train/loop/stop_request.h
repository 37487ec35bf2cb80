#pragma once
// Graceful stop on SIGINT/SIGTERM: the first signal asks the run to finish its step, save and
// exit 0; a second one exits at once.

namespace sinter::train {

// Also SIGUSR1, which the launcher of several ranks sends when one of them failed: the process exits
// with 1 at once, or right after the save in progress (SaveInProgress), so that its last save is whole.
// Installed first thing in main (runner_cli.cpp), so that no stop ever meets the default action;
// SIGINT and SIGTERM are unblocked, should the parent have blocked them.
void installStopHandlers();
// The tools (--init_checkpoint, --benchmark_steps, ...) save nothing on a stop: a signal ends them
// by its default action again.
void restoreDefaultStopSignals();
bool stopRequested();
// For tests and the app's in-process callers: ask for a stop as a signal would.
void requestStop();

// A file removed when a signal ends the process at once (a second stop signal, a failed peer's
// SIGUSR1), where no destructor runs: the output lock's (output_lock.h), so that the next run does
// not find it left behind. One file at a time; nullptr forgets it.
void removeOnImmediateExit(const char* path);

// Marks a save (model or state) for the whole of its life: a failed peer's SIGUSR1 waits for it.
class SaveInProgress {
 public:
  SaveInProgress();
  ~SaveInProgress();
  SaveInProgress(const SaveInProgress&) = delete;
  SaveInProgress& operator=(const SaveInProgress&) = delete;
};

}  // namespace sinter::train

#pragma once
// sinter-runner's exit codes (DESIGN.md §3), one definition for the runner and the app that reads them.

namespace sinter {

enum ExitCode : int {
  kExitOk = 0,              // finished, or stopped on request after saving
  kExitTrainingFailed = 1,  // training failed after it started
  kExitBadInput = 2,        // bad configuration or input: nothing was trained
};

}  // namespace sinter

#pragma once

namespace sinter::runner {

// DESIGN.md §3: 0 finished or stopped on request, 1 training failed, 2 bad configuration or input.
enum ExitCode : int { kExitOk = 0, kExitTrainingFailed = 1, kExitBadInput = 2 };

}  // namespace sinter::runner

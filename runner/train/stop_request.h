#pragma once
// Graceful stop on SIGINT/SIGTERM: the first signal asks the run to finish its step, save and
// exit 0; a second one exits at once.

namespace sinter::train {

void installStopHandlers();
bool stopRequested();
// For tests and the app's in-process callers: ask for a stop as a signal would.
void requestStop();

}  // namespace sinter::train

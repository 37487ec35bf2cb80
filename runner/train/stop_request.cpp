#include "train/stop_request.h"

#include <csignal>
#include <cstring>
#include <unistd.h>

#include <atomic>

namespace sinter::train {

namespace {

std::atomic<int> g_signals{0};

void onSignal(int) {
  if (g_signals.fetch_add(1) >= 1) {
    // Second signal: leave now, without saving (only async-signal-safe calls here).
    const char msg[] = "sinter-runner: second stop signal, exiting without saving\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(1);
  }
  const char msg[] = "sinter-runner: stop requested; finishing the current step and saving (signal again to exit now)\n";
  (void)!::write(2, msg, sizeof msg - 1);
}

}  // namespace

void installStopHandlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool stopRequested() { return g_signals.load() > 0; }

void requestStop() { g_signals.fetch_add(1); }

}  // namespace sinter::train

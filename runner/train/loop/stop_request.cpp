#include "train/loop/stop_request.h"

#include <csignal>
#include <cstring>
#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace sinter::train {

namespace {

std::atomic<int> g_signals{0};
std::atomic<int> g_saving{0};
std::atomic<bool> g_peerFailed{false};

// removeOnImmediateExit's file, copied where a signal handler may read it.
char g_removeOnExit[4096];
std::atomic<bool> g_removeOnExitSet{false};

void removeFileOnImmediateExit() {
  if (g_removeOnExitSet.load()) ::unlink(g_removeOnExit);
}

void leaveForFailedPeer() {
  removeFileOnImmediateExit();
  const char msg[] = "sinter-runner: another rank failed; this one exits too (its last save is kept)\n";
  (void)!::write(2, msg, sizeof msg - 1);
  ::_exit(1);
}

void onPeerFailed(int) {
  g_peerFailed.store(true);
  if (g_saving.load() == 0) leaveForFailedPeer();
}

void onSignal(int) {
  if (g_signals.fetch_add(1) >= 1) {
    // Second signal: leave now, without saving (only async-signal-safe calls here).
    const char msg[] = "sinter-runner: second stop signal, exiting without saving\n";
    (void)!::write(2, msg, sizeof msg - 1);
    removeFileOnImmediateExit();
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
  sa.sa_handler = onPeerFailed;
  sigaction(SIGUSR1, &sa, nullptr);
  // A parent may have started the runner with these blocked; a stop sent then arrives now.
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &stops, nullptr);
}

void restoreDefaultStopSignals() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

void removeOnImmediateExit(const char* path) {
  g_removeOnExitSet.store(false);
  if (!path || std::strlen(path) >= sizeof g_removeOnExit) return;
  std::memcpy(g_removeOnExit, path, std::strlen(path) + 1);
  g_removeOnExitSet.store(true);
}

SaveInProgress::SaveInProgress() { g_saving.fetch_add(1); }

SaveInProgress::~SaveInProgress() {
  if (g_saving.fetch_sub(1) == 1 && g_peerFailed.load()) {
    std::fflush(nullptr);
    leaveForFailedPeer();
  }
}

bool stopRequested() { return g_signals.load() > 0; }

void requestStop() { g_signals.fetch_add(1); }

}  // namespace sinter::train

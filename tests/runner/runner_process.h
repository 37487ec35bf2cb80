#pragma once
// Runs sinter-runner as a child process for tests: its exit code, stdout (events) and stderr, and
// reads the events it wrote.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/events.h"

namespace sinter::test {

struct ProcessResult {
  int exitCode = -1;
  std::string out, err;
  std::vector<std::string> lines() const {
    std::vector<std::string> v;
    std::istringstream ss(out);
    for (std::string l; std::getline(ss, l);) v.push_back(l);
    return v;
  }
};

// The pid of the runner process runRunner started last (for tests that look at its children).
// Writes `text` to `path`, making its folder (configs, captions and datasets of the run tests).
inline void writeText(const std::string& path, const std::string& text) {
  const auto slash = path.find_last_of('/');
  if (slash != std::string::npos) std::filesystem::create_directories(path.substr(0, slash));
  std::ofstream(path, std::ios::binary) << text;
}

// The whole of a file ("" when it cannot be read).
inline std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline pid_t& lastRunnerPid() {
  static pid_t pid = -1;
  return pid;
}

// The runner's stdin while it runs (its control channel with --control stdin): what a test writes
// to it, and its end.
class RunnerInput {
 public:
  explicit RunnerInput(int fd) : fd_(fd) {}
  ~RunnerInput() { close(); }
  RunnerInput(const RunnerInput&) = delete;
  RunnerInput& operator=(const RunnerInput&) = delete;
  // Written in one write (atomic in a pipe up to PIPE_BUF bytes); false once closed or the runner is gone.
  bool send(const std::string& text) {
    return fd_ >= 0 && ::write(fd_, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool open() const { return fd_ >= 0; }

 private:
  int fd_;
};

// Runs the runner with `args`; `onLine` sees each stdout line as it arrives and may return false
// to send SIGTERM once (a graceful stop request). With `onLineWithInput` instead, the runner's
// stdin is a pipe the callback may write to or close (closed when stdout ends); otherwise the
// runner shares the test's stdin.
inline ProcessResult runRunner(const std::vector<std::string>& args,
                               const std::function<bool(const std::string&)>& onLine = nullptr,
                               const std::function<void(const std::string&, RunnerInput&)>& onLineWithInput = nullptr) {
  int outPipe[2];
  if (::pipe(outPipe) != 0) return {};
  int inPipe[2] = {-1, -1};
  if (onLineWithInput) {
    if (::pipe(inPipe) != 0) return {};
    ::signal(SIGPIPE, SIG_IGN);  // a write after the runner has gone fails instead
  }
  char errTemplate[] = "/tmp/sinter_runner_err_XXXXXX";
  int errFd = ::mkstemp(errTemplate);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(outPipe[1], 1);
    ::dup2(errFd, 2);
    ::close(outPipe[0]);
    if (inPipe[0] >= 0) {
      ::dup2(inPipe[0], 0);
      ::close(inPipe[0]);
      ::close(inPipe[1]);
    }
    std::vector<char*> argv;
    std::string bin = SINTER_RUNNER_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(outPipe[1]);
  if (inPipe[0] >= 0) ::close(inPipe[0]);
  RunnerInput input(inPipe[1]);
  lastRunnerPid() = pid;
  ProcessResult r;
  FILE* out = ::fdopen(outPipe[0], "r");
  char* line = nullptr;
  size_t cap = 0;
  bool signalled = false;
  while (::getline(&line, &cap, out) > 0) {
    r.out += line;
    if (onLineWithInput) onLineWithInput(line, input);
    if (onLine && !signalled && !onLine(line)) {
      ::kill(pid, SIGTERM);
      signalled = true;
    }
  }
  std::free(line);
  std::fclose(out);
  input.close();
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(errTemplate);
  r.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  ::close(errFd);
  ::unlink(errTemplate);
  return r;
}

// The events of a run started with --events jsonl, in order.
inline std::vector<events::Event> eventsOf(const ProcessResult& r) {
  std::vector<events::Event> v;
  for (const auto& line : r.lines())
    if (auto e = events::parseJsonLine(line)) v.push_back(*e);
  return v;
}

// Those of one type (events::Step, events::Done, ...).
template <typename T>
std::vector<T> eventsOfType(const ProcessResult& r) {
  std::vector<T> v;
  for (const auto& e : eventsOf(r))
    if (auto t = std::get_if<T>(&e)) v.push_back(*t);
  return v;
}

// Each step's loss, in order.
inline std::vector<double> losses(const ProcessResult& r) {
  std::vector<double> v;
  for (const auto& s : eventsOfType<events::Step>(r)) v.push_back(s.loss);
  return v;
}

// The done event's status ("completed", "stopped", "failed"), or "" without one.
inline std::string doneStatus(const ProcessResult& r) {
  const auto done = eventsOfType<events::Done>(r);
  return done.empty() ? "" : done.front().status;
}

// A config (`args`) the dry run and the run both refuse with exit 2, the run's log naming `says`,
// before any model is loaded and with nothing written to `outputDir`; `name` labels the failures.
inline void expectRefusedBeforeLoading(const std::string& name, const std::vector<std::string>& args, const std::string& says,
                                       const std::string& outputDir) {
  std::vector<std::string> dry = args;
  dry.push_back("--dry_run");
  const ProcessResult checked = runRunner(dry), ran = runRunner(args);
  EXPECT_EQ(checked.exitCode, 2) << name << ":\n" << checked.err;
  EXPECT_EQ(ran.exitCode, 2) << name << ":\n" << ran.err;
  EXPECT_NE(ran.err.find(says), std::string::npos) << name << " should mention " << says << ":\n" << ran.err;
  EXPECT_EQ(ran.err.find("loading "), std::string::npos) << name << ":\n" << ran.err;
  EXPECT_FALSE(std::filesystem::exists(outputDir)) << name;
}

// Each of `lines` in the run's log (stderr), each after the one before it.
inline void expectLogInOrder(const ProcessResult& r, const std::vector<std::string>& lines) {
  size_t at = 0;
  for (const std::string& line : lines) {
    const size_t found = r.err.find(line, at);
    EXPECT_NE(found, std::string::npos) << "'" << line << "' not after the lines before it:\n" << r.err;
    if (found == std::string::npos) return;
    at = found;
  }
}

}  // namespace sinter::test

#include "cli/queue_processes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "train/loop/stop_request.h"

extern char** environ;

namespace sinter::runner {

namespace {

std::vector<char*> queueArgvPointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

std::string queueSignalText(int signal) { return "was killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")"; }

// Reads the run's stdout line by line: each line copied on when asked, its done and error events kept.
class QueuedRunEvents {
 public:
  QueuedRunEvents(bool forward, QueuedRunOutcome& outcome) : forward_(forward), outcome_(outcome) {}
  void feed(const char* data, size_t n) {
    if (forward_) (void)!::write(1, data, n);
    partial_.append(data, n);
    for (size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
      line(partial_.substr(0, nl));
      partial_.erase(0, nl + 1);
    }
    if (partial_.size() > (1u << 20)) partial_.clear();  // no event is this long
  }
  void finish() {
    if (!partial_.empty()) line(partial_);
    partial_.clear();
  }

 private:
  void line(const std::string& text) {
    const auto event = events::parseJsonLine(text);
    if (!event) return;
    if (const auto* done = std::get_if<events::Done>(&*event)) outcome_.done = *done;
    if (const auto* error = std::get_if<events::Error>(&*event)) outcome_.lastError = error->message;
  }
  bool forward_;
  QueuedRunOutcome& outcome_;
  std::string partial_;
};

}  // namespace

QueuedRunOutcome runQueuedRun(const QueuedRunLaunch& launch) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
  std::vector<std::string> argv{launch.executable};
  argv.insert(argv.end(), launch.arguments.begin(), launch.arguments.end());
  std::vector<char*> argvp = queueArgvPointers(argv);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const std::string why = std::strerror(errno);
    ::close(out[0]);
    ::close(out[1]);
    throw std::runtime_error("cannot start the run: " + why);
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    ::dup2(out[1], 1);
    if (!launch.workingDir.empty() && ::chdir(launch.workingDir.c_str()) != 0) {
      const std::string msg = "sinter-runner: cannot enter the run's working_dir " + launch.workingDir + ": " + std::strerror(errno) + "\n";
      (void)!::write(2, msg.data(), msg.size());
      ::_exit(2);
    }
    ::execv(argvp[0], argvp.data());
    const char msg[] = "sinter-runner: cannot start the queued run\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(out[1]);

  QueuedRunOutcome outcome;
  QueuedRunEvents reader(launch.forwardEvents, outcome);
  char buffer[65536];
  for (;;) {
    if (!outcome.stopForwarded && train::stopRequested()) {
      ::kill(pid, SIGTERM);
      outcome.stopForwarded = true;
    }
    pollfd pfd{out[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, 200);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n > 0) reader.feed(buffer, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  reader.finish();
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    // A stop asked once the run had closed its stdout still reaches it.
    if (!outcome.stopForwarded && train::stopRequested()) {
      ::kill(pid, SIGTERM);
      outcome.stopForwarded = true;
    }
  }
  if (WIFEXITED(status)) {
    outcome.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.endedBy = queueSignalText(WTERMSIG(status));
  }
  return outcome;
}

int runQueueEndCommand(const std::vector<std::string>& command, const std::vector<std::string>& environment, std::string* why) {
  std::vector<std::string> argv = command;
  std::vector<char*> argvp = queueArgvPointers(argv);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  env.insert(env.end(), environment.begin(), environment.end());
  std::vector<char*> envp = queueArgvPointers(env);
  int report[2];  // closed by exec; holds errno when exec failed
  if (::pipe2(report, O_CLOEXEC) != 0) {
    if (why) *why = std::string("cannot make a pipe: ") + std::strerror(errno);
    return -1;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (why) *why = std::string("cannot start it: ") + std::strerror(errno);
    ::close(report[0]);
    ::close(report[1]);
    return -1;
  }
  if (pid == 0) {
    ::close(report[0]);
    // The command's own handling of a stop; the runner's handlers are not its.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::execvpe(argvp[0], argvp.data(), envp.data());
    const int error = errno;
    (void)!::write(report[1], &error, sizeof error);
    ::_exit(127);
  }
  ::close(report[1]);
  int execError = 0;
  ssize_t got;
  while ((got = ::read(report[0], &execError, sizeof execError)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got == static_cast<ssize_t>(sizeof execError)) {
    if (why) *why = "cannot run " + command.front() + ": " + std::strerror(execError);
    return -1;
  }
  if (WIFSIGNALED(status)) {
    if (why) *why = queueSignalText(WTERMSIG(status));
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace sinter::runner

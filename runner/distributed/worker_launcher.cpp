#include "distributed/worker_launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "core/events.h"

extern char** environ;

namespace sinter::distributed {

namespace {

// The workers' pids, for the signal handler (which may only make async-signal-safe calls).
pid_t g_workers[kMaxWorkers];
std::atomic<int> g_workerCount{0};
std::atomic<int> g_signalsForwarded{0};

void forwardSignal(int signal) {
  g_signalsForwarded.fetch_add(1);
  const int n = g_workerCount.load();
  for (int i = 0; i < n; ++i)
    if (g_workers[i] > 0) ::kill(g_workers[i], signal);
}

void installForwarding() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = forwardSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

std::string describeStatus(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int s = WTERMSIG(status);
    return "was killed by signal " + std::to_string(s) + " (" + ::strsignal(s) + ")";
  }
  return "ended with status " + std::to_string(status);
}

// The environment of one worker: the launcher's own, less any torchrun variables, plus its rank's.
std::vector<std::string> workerEnvironment(int rank, int processes, int port) {
  static const char* const kOwn[] = {"RANK=", "LOCAL_RANK=", "WORLD_SIZE=", "LOCAL_WORLD_SIZE=", "MASTER_ADDR=", "MASTER_PORT="};
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    bool own = false;
    for (const char* prefix : kOwn) own |= std::strncmp(*e, prefix, std::strlen(prefix)) == 0;
    if (!own) env.emplace_back(*e);
  }
  env.push_back("RANK=" + std::to_string(rank));
  env.push_back("LOCAL_RANK=" + std::to_string(rank));
  env.push_back("WORLD_SIZE=" + std::to_string(processes));
  env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(processes));
  env.push_back("MASTER_ADDR=127.0.0.1");
  env.push_back("MASTER_PORT=" + std::to_string(port));
  return env;
}

std::vector<char*> pointersTo(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace

int freeLocalPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("cannot open a socket to find a free port: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("cannot find a free port on 127.0.0.1: " + why);
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

int launchWorkers(const WorkerLaunch& launch) {
  if (launch.processes < 1 || launch.processes > kMaxWorkers)
    throw std::invalid_argument("--nproc_per_node must be from 1 to " + std::to_string(kMaxWorkers));
  int port = 0;
  if (const char* p = std::getenv("MASTER_PORT"); p && *p) port = std::atoi(p);
  if (port <= 0 || port > 65535) port = freeLocalPort();
  spdlog::info("starting {} workers (rank 0 at 127.0.0.1:{})", launch.processes, port);

  int eventsPipe[2];
  if (::pipe2(eventsPipe, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
  const int devNull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  const pid_t launcher = ::getpid();
  installForwarding();
  std::vector<pid_t> pids(launch.processes, -1);
  for (int rank = 0; rank < launch.processes; ++rank) {
    std::vector<std::string> env = workerEnvironment(rank, launch.processes, port);
    std::vector<std::string> argv{launch.executable};
    argv.insert(argv.end(), launch.arguments.begin(), launch.arguments.end());
    std::vector<char*> envp = pointersTo(env), argvp = pointersTo(argv);
    const pid_t pid = ::fork();
    if (pid < 0) {
      forwardSignal(SIGKILL);
      throw std::runtime_error(std::string("cannot start a worker: ") + std::strerror(errno));
    }
    if (pid == 0) {
      // A worker never outlives its launcher.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != launcher) ::_exit(1);
      ::dup2(rank == 0 ? eventsPipe[1] : devNull, 1);
      struct sigaction sa;
      std::memset(&sa, 0, sizeof sa);
      sa.sa_handler = SIG_DFL;
      sigaction(SIGINT, &sa, nullptr);
      sigaction(SIGTERM, &sa, nullptr);
      ::execve(argvp[0], argvp.data(), envp.data());
      const char msg[] = "sinter-runner: cannot start a worker process\n";
      (void)!::write(2, msg, sizeof msg - 1);
      ::_exit(127);
    }
    pids[rank] = pid;
    g_workers[rank] = pid;
    g_workerCount.store(rank + 1);
  }
  ::close(eventsPipe[1]);
  ::close(devNull);
  for (int rank = 0; rank < launch.processes; ++rank) spdlog::info("rank {}: pid {}", rank, pids[rank]);

  // Rank 0's events pass through line by line; whether its done event was among them.
  std::string partial;
  bool doneSeen = false, pipeOpen = true;
  auto forward = [&](const char* data, size_t n) {
    (void)!::write(1, data, n);
    partial.append(data, n);
    for (size_t nl; (nl = partial.find('\n')) != std::string::npos;) {
      const std::string line = partial.substr(0, nl);
      partial.erase(0, nl + 1);
      if (auto event = events::parseJsonLine(line); event && events::typeName(*event) == "done") doneSeen = true;
    }
  };
  auto drain = [&](int timeoutMs) {
    if (!pipeOpen) {
      if (timeoutMs > 0) ::poll(nullptr, 0, timeoutMs);
      return;
    }
    pollfd pfd{eventsPipe[0], POLLIN, 0};
    if (::poll(&pfd, 1, timeoutMs) <= 0) return;
    char buffer[65536];
    const ssize_t n = ::read(eventsPipe[0], buffer, sizeof buffer);
    if (n > 0) forward(buffer, static_cast<size_t>(n));
    else if (n == 0) pipeOpen = false;
  };

  int running = launch.processes;
  std::optional<int> failedRank;
  int exitCode = 0;
  std::optional<std::chrono::steady_clock::time_point> killAt;
  while (running > 0 || pipeOpen) {
    drain(running > 0 ? 100 : 1000);
    int status = 0;
    pid_t pid;
    while (running > 0 && (pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      int rank = 0;
      while (rank < launch.processes && pids[rank] != pid) ++rank;
      if (rank == launch.processes) continue;
      --running;
      g_workers[rank] = -1;
      pids[rank] = -1;
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (ok) continue;
      spdlog::error("rank {} {}", rank, describeStatus(status));
      if (failedRank) continue;
      failedRank = rank;
      exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
      if (running > 0) {
        // SIGUSR1: each exits with 1 at once, or after the save it is writing (train/loop/stop_request.h).
        spdlog::error("stopping the other workers (rank {} failed)", rank);
        for (pid_t other : pids)
          if (other > 0) ::kill(other, SIGUSR1);
        killAt = std::chrono::steady_clock::now() + launch.grace;
      }
    }
    if (killAt && running > 0 && std::chrono::steady_clock::now() >= *killAt) {
      spdlog::error("the workers did not stop within {} s of rank {}'s failure; killing them", launch.grace.count(), *failedRank);
      for (pid_t other : pids)
        if (other > 0) ::kill(other, SIGKILL);
      killAt.reset();
    }
    if (running == 0 && pipeOpen) {
      // Every worker is gone; whatever remains in the pipe is read, then it closes.
      char buffer[65536];
      ssize_t n;
      while ((n = ::read(eventsPipe[0], buffer, sizeof buffer)) > 0) forward(buffer, static_cast<size_t>(n));
      pipeOpen = false;
    }
  }
  ::close(eventsPipe[0]);
  g_workerCount.store(0);
  if (failedRank && launch.eventsOnStdout && !doneSeen) {
    const std::string message = "rank " + std::to_string(*failedRank) + " failed and the run ended (exit code " + std::to_string(exitCode) + ")";
    const std::string lines = events::toJsonLine(events::Error{message}) + "\n" + events::toJsonLine(events::Done{"failed", 0, 0}) + "\n";
    (void)!::write(1, lines.data(), lines.size());
  }
  if (failedRank) return exitCode;
  spdlog::info("all {} workers finished", launch.processes);
  return 0;
}

}  // namespace sinter::distributed

// Test tool: replays a recorded sinter-runner session (the event stream on stdout, the log on
// stderr) so the app's event handling is exercised through a real process and real pipes.
//   replay_runner EVENTS.jsonl [--stderr FILE] [--exit N] [--delay-ms N]
//                 [--until-term]   keep sending step events until SIGTERM, then report `stopped`
//                 [--ignore-term]  keep sending step events and ignore SIGTERM (needs a kill)
// Called as the app calls the runner (`--config_file RUN.toml --events jsonl`), it replays
// $SINTER_REPLAY_EVENTS and first echoes the run file to stderr, so tests can check what Start wrote.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

namespace {
std::atomic<bool> terminated{false};
void onTerm(int) { terminated = true; }
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: replay_runner EVENTS.jsonl [--stderr FILE] [--exit N] [--delay-ms N] [--until-term|--ignore-term]\n";
    return 2;
  }
  std::string eventsPath = argv[1], stderrPath;
  if (eventsPath == "--config_file" && argc > 2) {
    std::ifstream config(argv[2]);
    if (!config) {
      std::fprintf(stderr, "cannot read %s\n", argv[2]);
      return 2;
    }
    std::stringstream text;
    text << config.rdbuf();
    std::fprintf(stderr, "run file %s:\n%s", argv[2], text.str().c_str());
    const char* events = std::getenv("SINTER_REPLAY_EVENTS");
    eventsPath = events ? events : "";
  }
  int exitCode = 0, delayMs = 0;
  bool untilTerm = false, ignoreTerm = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--stderr" && i + 1 < argc) stderrPath = argv[++i];
    else if (a == "--exit" && i + 1 < argc) exitCode = std::atoi(argv[++i]);
    else if (a == "--delay-ms" && i + 1 < argc) delayMs = std::atoi(argv[++i]);
    else if (a == "--until-term") untilTerm = true;
    else if (a == "--ignore-term") ignoreTerm = true;
  }
  std::signal(SIGTERM, ignoreTerm ? SIG_IGN : onTerm);

  if (!stderrPath.empty()) {
    std::ifstream in(stderrPath, std::ios::binary);
    std::stringstream all;
    all << in.rdbuf();
    std::fputs(all.str().c_str(), stderr);
    std::fflush(stderr);
  }
  std::ifstream events(eventsPath);
  std::string line;
  while (std::getline(events, line)) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (delayMs) std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
  }
  if (untilTerm || ignoreTerm) {
    long long step = 0;
    while (!terminated) {
      ++step;
      std::printf("{\"type\":\"step\",\"step\":%lld,\"total\":1000,\"epoch\":1,\"loss\":%.4f,\"it_per_s\":50,\"eta_s\":%lld}\n",
                  step, 0.5 / (1.0 + step * 0.01), (1000 - step) / 50);
      std::fflush(stdout);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::fprintf(stderr, "[info] stop requested: saving at step %lld\n", step);
    std::printf("{\"type\":\"saved\",\"path\":\"/out/state\",\"kind\":\"state\"}\n");
    std::printf("{\"type\":\"done\",\"status\":\"stopped\",\"steps\":%lld,\"seconds\":1.0}\n", step);
    std::fflush(stdout);
  }
  return exitCode;
}

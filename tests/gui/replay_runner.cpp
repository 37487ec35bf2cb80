// Test tool: replays a recorded sinter-runner session (the event stream on stdout, the log on
// stderr) so the app's event handling is exercised through a real process and real pipes.
//   replay_runner EVENTS.jsonl [--stderr FILE] [--exit N] [--delay-ms N]
//                 [--until-term]   keep sending step events until SIGTERM, then report `stopped`
//                 [--ignore-term]  keep sending step events and ignore SIGTERM (needs a kill)
// Hostile output, after the replayed events (issue 37: what a broken or hostile runner may write):
//                 [--stdout-bytes N]         N bytes on stdout without a newline, then exit
//                 [--stdout-line N]          one stdout line of N bytes (not JSON)
//                 [--long-event N]           a warning event whose message is N bytes
//                 [--stderr-lines COUNT N]   COUNT stderr lines of N bytes each
//                 [--step-flood N [TOTAL]]   N step events as fast as the pipe takes them (total
//                                            TOTAL, default N)
//                 [--done-steps N]           a `done` event (status completed) counting N steps
// Called as the app calls the runner (`--config_file RUN.toml --events jsonl`), it replays
// $SINTER_REPLAY_EVENTS and first echoes the run file to stderr, so tests can check what Start wrote;
// $SINTER_REPLAY_OPTIONS (space-separated) adds the options above.
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
#include <vector>

namespace {
std::atomic<bool> terminated{false};
void onTerm(int) { terminated = true; }

// `count` bytes of `fill` (a line's body), written in pieces so a 300 MB line needs no 300 MB buffer.
void writeRepeated(std::FILE* out, char fill, long long count) {
  const std::string block(1 << 16, fill);
  for (long long left = count; left > 0; left -= static_cast<long long>(block.size()))
    std::fwrite(block.data(), 1, static_cast<size_t>(std::min<long long>(left, block.size())), out);
}

void stepFlood(long long count, long long total) {
  // Buffered as a fast runner's stdout would be when its reader keeps up: one write per 64 KiB.
  for (long long step = 1; step <= count && !terminated; ++step)
    std::printf("{\"type\":\"step\",\"step\":%lld,\"total\":%lld,\"epoch\":1,\"loss\":%.6f,\"avg_loss\":0.1,"
                "\"lr\":0.0001,\"it_per_s\":500,\"eta_s\":%lld,\"step_ms\":2,\"peak_mem_mb\":100}\n",
                step, total, 0.1 + 0.05 * ((step * 7919) % 101) / 100.0 + (step == count / 2 ? 1.0 : 0.0),
                (total - step) / 500);
  std::fflush(stdout);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: replay_runner EVENTS.jsonl [--stderr FILE] [--exit N] [--delay-ms N] [--until-term|--ignore-term] [hostile output options, see the source]\n";
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
  std::vector<std::string> args(argv + 2, argv + argc);
  if (const char* options = std::getenv("SINTER_REPLAY_OPTIONS")) {
    std::istringstream words(options);
    for (std::string word; words >> word;) args.push_back(word);
  }
  int exitCode = 0, delayMs = 0;
  bool untilTerm = false, ignoreTerm = false;
  long long stdoutBytes = -1, stdoutLine = -1, longEvent = -1, stderrCount = 0, stderrBytes = 0;
  long long floodCount = 0, floodTotal = 0, doneSteps = -1;
  bool doneStepsSet = false;
  const auto number = [&](size_t& i) { return i + 1 < args.size() ? std::atoll(args[++i].c_str()) : 0LL; };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--stderr" && i + 1 < args.size()) stderrPath = args[++i];
    else if (a == "--exit") exitCode = static_cast<int>(number(i));
    else if (a == "--delay-ms") delayMs = static_cast<int>(number(i));
    else if (a == "--until-term") untilTerm = true;
    else if (a == "--ignore-term") ignoreTerm = true;
    else if (a == "--stdout-bytes") stdoutBytes = number(i);
    else if (a == "--stdout-line") stdoutLine = number(i);
    else if (a == "--long-event") longEvent = number(i);
    else if (a == "--stderr-lines") stderrCount = number(i), stderrBytes = number(i);
    else if (a == "--step-flood") {
      floodCount = floodTotal = number(i);
      if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) floodTotal = number(i);
    } else if (a == "--done-steps") doneSteps = number(i), doneStepsSet = true;
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
  if (stderrCount > 0) {
    for (long long n = 0; n < stderrCount; ++n) {
      std::fprintf(stderr, "[info] long line %lld: ", n + 1);
      writeRepeated(stderr, 'x', stderrBytes);
      std::fputc('\n', stderr);
    }
    std::fflush(stderr);
  }
  if (stdoutLine >= 0) {
    writeRepeated(stdout, 'y', stdoutLine);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  if (longEvent >= 0) {
    std::fputs("{\"type\":\"warning\",\"message\":\"", stdout);
    writeRepeated(stdout, 'w', longEvent);
    std::fputs("\"}\n", stdout);
    std::fflush(stdout);
  }
  if (floodCount > 0) stepFlood(floodCount, floodTotal);
  if (doneStepsSet) {
    std::printf("{\"type\":\"done\",\"status\":\"completed\",\"steps\":%lld,\"seconds\":1.0}\n", doneSteps);
    std::fflush(stdout);
  }
  if (stdoutBytes >= 0) {
    std::fputs("no newline: ", stdout);
    writeRepeated(stdout, 'z', stdoutBytes);
    std::fflush(stdout);
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

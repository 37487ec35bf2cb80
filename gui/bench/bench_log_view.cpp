// Benchmark (not a test): the log view fed by a child process writing lines at a fixed rate.
// `sinter_bench_log_view [lines_per_second] [seconds]` (default 10000 for 5 s) starts itself in
// `--emit` mode as the child (writing runner-like log lines to stderr, the way the runner's logs
// arrive), feeds them through the real RunController into the real LogView in a shown window, and
// measures how long the event loop was ever blocked (a 10 ms timer's worst lateness), how many
// lines arrived, and the CPU time the app spent.
#include <QApplication>
#include <QElapsedTimer>
#include <QPlainTextEdit>
#include <QTimer>
#include <algorithm>
#include <vector>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include "log_view.h"
#include "run_controller.h"

namespace {

int emitLines(int perSecond, int seconds) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const long long total = static_cast<long long>(perSecond) * seconds;
  long long written = 0;
  char line[200];
  while (written < total) {
    const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
    const long long due = std::min(total, static_cast<long long>(elapsed * perSecond) + 1);
    for (; written < due; ++written) {
      const int n = std::snprintf(line, sizeof line,
                                  "[2026-01-01 00:00:00.000] [info] steps: %lld/%lld loss=0.1234 lr=1e-04 it/s=3.21\n",
                                  written + 1, total);
      std::fwrite(line, 1, n, stderr);
    }
    std::fflush(stderr);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return 0;
}

double cpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--emit")
    return emitLines(argc > 2 ? std::atoi(argv[2]) : 10000, argc > 3 ? std::atoi(argv[3]) : 5);
  QApplication app(argc, argv);
  const int perSecond = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int seconds = argc > 2 ? std::atoi(argv[2]) : 5;

  sinter::gui::LogView view;
  view.resize(1000, 600);
  view.show();
  sinter::gui::RunController controller;
  long long received = 0;
  QObject::connect(&controller, &sinter::gui::RunController::logLine, &view,
                   [&](const QString& text, bool transient) {
                     ++received;
                     view.appendLine(text, transient);
                   });

  // The event loop's responsiveness: a 10 ms timer that records its worst lateness.
  QElapsedTimer tick;
  double worstGapMs = 0;
  long long ticks = 0;
  std::vector<double> gaps;
  QTimer heartbeat;
  heartbeat.setInterval(10);
  QObject::connect(&heartbeat, &QTimer::timeout, [&] {
    if (ticks++ > 0) {
      gaps.push_back(tick.nsecsElapsed() / 1e6);
      worstGapMs = std::max(worstGapMs, gaps.back());
    }
    tick.restart();
  });

  QElapsedTimer wall;
  const double cpuStart = cpuSeconds();
  QObject::connect(&controller, &sinter::gui::RunController::finished, [&](int, bool) {
    view.flush();
    const double elapsed = wall.nsecsElapsed() / 1e9;
    std::printf("lines requested: %lld at %d lines/s for %d s\n", static_cast<long long>(perSecond) * seconds,
                perSecond, seconds);
    std::printf("lines received: %lld in %.2f s (%.0f lines/s), lines kept in the view: %d\n", received, elapsed,
                received / elapsed, view.lineCount());
    std::sort(gaps.begin(), gaps.end());
    const double p99 = gaps.empty() ? 0 : gaps[std::min(gaps.size() - 1, gaps.size() * 99 / 100)];
    const long long over100 = std::count_if(gaps.begin(), gaps.end(), [](double g) { return g > 100; });
    std::printf("event loop: 10 ms ticks: %lld, 99th percentile gap %.1f ms, worst %.1f ms, gaps over 100 ms: %lld\n",
                ticks, p99, worstGapMs, over100);
    std::printf("app CPU time: %.2f s (%.0f%% of one core)\n", cpuSeconds() - cpuStart,
                100.0 * (cpuSeconds() - cpuStart) / elapsed);
    QTimer::singleShot(0, &app, &QCoreApplication::quit);
  });
  wall.start();
  tick.start();
  heartbeat.start();
  controller.start(QCoreApplication::applicationFilePath(),
                   {QStringLiteral("--emit"), QString::number(perSecond), QString::number(seconds)});
  return app.exec();
}

// Benchmark (not a test): the run area under the floods of issue 37. For each case this program
// starts itself in `--emit CASE N` mode as the runner, feeds its output through the real
// RunController into the real RunPanel (monitor, log, chart) in a shown window, and prints how
// long it took, the event (or byte) throughput, the event loop's longest stall (a 10 ms timer's
// worst lateness), how many stalls passed 100 ms and 1 s, and how far the peak resident memory rose.
//   sinter_bench_event_flood [CASE...] [--steps N] [--screenshots DIR]
// Cases: steps (N step events as fast as the pipe takes them, default 1000000), line (one 10 MB
// stdout line), event (one 10 MB warning event), stderr (2000 stderr lines of 100 KB), stderrlines
// (1000000 short stderr lines, as fast as the pipe takes them), nonewline (300 MB on stdout without a
// newline). No case named: all of them. --screenshots writes the
// window after each case to DIR/<case>.png, for a person to look at.
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "log_view.h"
#include "loss_chart.h"
#include "run_controller.h"
#include "run_monitor.h"
#include "run_panel.h"

namespace {

void writeRepeated(std::FILE* out, char fill, long long count) {
  const std::string block(1 << 16, fill);
  for (long long left = count; left > 0; left -= static_cast<long long>(block.size()))
    std::fwrite(block.data(), 1, static_cast<size_t>(std::min<long long>(left, block.size())), out);
}

// The child: a runner that writes one flood, after a start event as the runner's own.
int emitFlood(const std::string& kind, long long n) {
  std::printf("{\"type\":\"start\",\"version\":\"bench\",\"device\":\"cpu\",\"model_family\":\"sdxl\","
              "\"training_mode\":\"lora\",\"total_steps\":%lld,\"epochs\":1}\n",
              kind == "steps" ? n : 1000);
  if (kind == "steps") {
    for (long long step = 1; step <= n; ++step)
      std::printf("{\"type\":\"step\",\"step\":%lld,\"total\":%lld,\"epoch\":1,\"loss\":%.6f,\"avg_loss\":0.1,"
                  "\"lr\":0.0001,\"it_per_s\":500,\"eta_s\":%lld,\"step_ms\":2,\"peak_mem_mb\":100}\n",
                  step, n, 0.1 + 0.05 * ((step * 7919) % 101) / 100.0, (n - step) / 500);
    std::printf("{\"type\":\"done\",\"status\":\"completed\",\"steps\":%lld,\"seconds\":1.0}\n", n);
  } else if (kind == "line") {
    writeRepeated(stdout, 'y', 10'000'000);
    std::fputc('\n', stdout);
  } else if (kind == "event") {
    std::fputs("{\"type\":\"warning\",\"message\":\"", stdout);
    writeRepeated(stdout, 'w', 10'000'000);
    std::fputs("\"}\n", stdout);
  } else if (kind == "stderr") {
    for (int i = 0; i < 2000; ++i) {
      std::fprintf(stderr, "[info] long line %d: ", i + 1);
      writeRepeated(stderr, 'x', 100'000);
      std::fputc('\n', stderr);
    }
  } else if (kind == "stderrlines") {
    // Written in 64 KB pieces, as a runner whose stderr is a buffered pipe writes them.
    static char buffer[1 << 16];
    std::setvbuf(stderr, buffer, _IOFBF, sizeof buffer);
    for (int i = 0; i < 1'000'000; ++i) std::fprintf(stderr, "[info] short line %d\n", i + 1);
  } else if (kind == "nonewline") {
    writeRepeated(stdout, 'z', 300'000'000);
  } else {
    std::fprintf(stderr, "unknown case %s\n", kind.c_str());
    return 2;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  return 0;
}

double statusMiB(const char* key) {
  QFile status(QStringLiteral("/proc/self/status"));
  if (!status.open(QIODevice::ReadOnly)) return -1;
  for (const QByteArray& line : status.readAll().split('\n'))
    if (line.startsWith(key)) return line.mid(static_cast<int>(std::strlen(key))).trimmed().split(' ').value(0).toDouble() / 1024.0;
  return -1;
}

bool resetPeakMemory() {
  QFile clear(QStringLiteral("/proc/self/clear_refs"));
  return clear.open(QIODevice::WriteOnly) && clear.write("5") == 1;
}

void runCase(const std::string& kind, long long steps, const QString& screenshots) {
  QWidget window;
  window.resize(1280, 800);
  auto* panel = new sinter::gui::RunPanel(&window);
  panel->resize(window.size());
  window.show();
  QApplication::processEvents();

  long long events = 0;
  QObject::connect(panel->controller(), &sinter::gui::RunController::eventReceived, [&] { ++events; });
  QElapsedTimer tick;
  std::vector<double> gaps;
  QTimer heartbeat;
  heartbeat.setInterval(10);
  QObject::connect(&heartbeat, &QTimer::timeout, [&] {
    if (tick.isValid()) gaps.push_back(tick.nsecsElapsed() / 1e6);
    tick.restart();
  });

  const bool peakMeasured = resetPeakMemory();
  const double residentBefore = statusMiB("VmRSS:");
  QEventLoop loop;
  QObject::connect(panel->controller(), &sinter::gui::RunController::finished, &loop, &QEventLoop::quit);
  QElapsedTimer wall;
  wall.start();
  heartbeat.start();
  panel->startProcess(QCoreApplication::applicationFilePath(),
                      {QStringLiteral("--emit"), QString::fromStdString(kind), QString::number(steps)}, QString());
  loop.exec();
  panel->logView()->flush();
  panel->lossChart()->refresh();
  const double seconds = wall.nsecsElapsed() / 1e9;
  heartbeat.stop();

  std::sort(gaps.begin(), gaps.end());
  const double worst = gaps.empty() ? 0 : gaps.back();
  const long long over100 = std::count_if(gaps.begin(), gaps.end(), [](double g) { return g > 100; });
  const long long over1s = std::count_if(gaps.begin(), gaps.end(), [](double g) { return g > 1000; });
  std::printf("%-10s %8.2f s  events %9lld (%8.0f /s)  chart points %8d shown %5d  log lines %5d chars %8lld  "
              "longest stall %7.1f ms  stalls >100 ms %3lld  >1 s %3lld",
              kind.c_str(), seconds, events, events / seconds, panel->lossChart()->pointCount(),
              panel->lossChart()->shownPointCount(), panel->logView()->lineCount(),
              static_cast<long long>(panel->logView()->characterCount()), worst, over100, over1s);
  if (peakMeasured) std::printf("  peak memory +%.0f MiB", statusMiB("VmHWM:") - residentBefore);
  std::printf("  (%s)\n", qPrintable(panel->monitor()->statusText().section(QLatin1Char('\n'), 0, 0)));
  std::fflush(stdout);
  if (!screenshots.isEmpty()) {
    QApplication::processEvents();
    window.grab().save(screenshots + QStringLiteral("/") + QString::fromStdString(kind) + QStringLiteral(".png"));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 3 && std::string(argv[1]) == "--emit") return emitFlood(argv[2], std::atoll(argv[3]));
  QApplication app(argc, argv);
  long long steps = 1'000'000;
  QString screenshots;
  std::vector<std::string> cases;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc) steps = std::atoll(argv[++i]);
    else if (a == "--screenshots" && i + 1 < argc) screenshots = QString::fromLocal8Bit(argv[++i]);
    else cases.push_back(a);
  }
  if (cases.empty()) cases = {"steps", "line", "event", "stderr", "stderrlines", "nonewline"};
  std::printf("event floods through the run area (RunController -> RunPanel), window 1280x800\n");
  for (const std::string& kind : cases) runCase(kind, steps, screenshots);
  return 0;
}

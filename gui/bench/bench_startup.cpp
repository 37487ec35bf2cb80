// Benchmark (not a test): cold start to a shown main window.
// `sinter_bench_startup [runs]` starts itself `runs` times as a fresh process in `--child` mode;
// each child builds the real MainWindow, shows it and reports when its first paint happened.
// Printed: wall time from process spawn to the first paint, and the child's time from main().
#include <QApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "main_window.h"

namespace {

QElapsedTimer sinceMain;

class FirstPaintProbe : public QObject {
 public:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::Paint && !reported_) {
      reported_ = true;
      std::printf("shown %.1f\n", sinceMain.nsecsElapsed() / 1e6);
      std::fflush(stdout);
      QTimer::singleShot(0, qApp, &QCoreApplication::quit);
    }
    return QObject::eventFilter(watched, event);
  }

 private:
  bool reported_ = false;
};

int runChild(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("SinterBench"));
  sinter::gui::MainWindow window;
  FirstPaintProbe probe;
  window.installEventFilter(&probe);
  window.show();
  return app.exec();
}

}  // namespace

int main(int argc, char** argv) {
  sinceMain.start();
  if (argc > 1 && std::string(argv[1]) == "--child") return runChild(argc, argv);
  QCoreApplication app(argc, argv);
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::vector<double> wall, inside;
  for (int i = 0; i < runs; ++i) {
    QProcess child;
    QElapsedTimer timer;
    timer.start();
    child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--child")});
    double shownAt = -1;
    double childMs = -1;
    while (child.waitForReadyRead(10000)) {
      const QByteArray line = child.readLine();
      if (line.startsWith("shown ")) {
        shownAt = timer.nsecsElapsed() / 1e6;
        childMs = line.mid(6).trimmed().toDouble();
        break;
      }
    }
    child.waitForFinished(10000);
    if (shownAt < 0) {
      std::fprintf(stderr, "run %d: the window never reported a paint\n%s\n", i, child.readAllStandardError().constData());
      return 1;
    }
    wall.push_back(shownAt);
    inside.push_back(childMs);
    std::printf("run %d: spawn to first paint %.1f ms (main() to first paint %.1f ms)\n", i, shownAt, childMs);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(inside.begin(), inside.end());
  std::printf("median over %d runs: spawn to first paint %.1f ms, main() to first paint %.1f ms\n", runs,
              wall[wall.size() / 2], inside[inside.size() / 2]);
  return 0;
}

// Hostile runner output (issue 37), through the real window: Start is clicked on the LoRA tab and
// the "runner" is gui_replay_runner told to misbehave ($SINTER_REPLAY_OPTIONS). Hundreds of
// megabytes without a newline, lines and events of megabytes, thousands of long stderr lines, a
// flood of step events, a done event with an absurd count, and a folder chosen as the runner: the
// app stays up, its memory and its log stay bounded, the chart and progress are coalesced, and
// what it shows is true.
#include <QLineSeries>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QValueAxis>
#include <QtTest>
#include <algorithm>

#include "app_paths.h"
#include "gui_test_support.h"
#include "line_splitter.h"
#include "log_view.h"
#include "loss_chart.h"
#include "main_window.h"
#include "run_controller.h"
#include "run_monitor.h"
#include "run_panel.h"
#include "training_tab.h"

using namespace sinter;
using namespace sinter::gui;

namespace {

// The peak resident memory of this process since the last resetPeakMemory(), in MiB; -1 where
// Linux's /proc does not tell it.
double peakMemoryMiB() {
  QFile status(QStringLiteral("/proc/self/status"));
  if (!status.open(QIODevice::ReadOnly)) return -1;
  for (const QByteArray& line : status.readAll().split('\n'))
    if (line.startsWith("VmHWM:")) return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
  return -1;
}

// Sets the peak back to the memory in use now (Linux: "5" to clear_refs); false where it cannot.
bool resetPeakMemory() {
  QFile clear(QStringLiteral("/proc/self/clear_refs"));
  return clear.open(QIODevice::WriteOnly) && clear.write("5") == 1;
}

double residentMiB() {
  QFile status(QStringLiteral("/proc/self/status"));
  if (!status.open(QIODevice::ReadOnly)) return -1;
  for (const QByteArray& line : status.readAll().split('\n'))
    if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
  return -1;
}

int longestLine(const QString& text) {
  int longest = 0;
  for (const QStringView line : QStringView(text).split(QLatin1Char('\n'))) longest = std::max(longest, int(line.size()));
  return longest;
}

QLineSeries* rawSeries(LossChart* chart) { return qobject_cast<QLineSeries*>(chart->chart()->series().at(0)); }

}  // namespace

class HostileRunnerTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir models_;
  QString checkpoint_;

  // A window whose LoRA tab is ready to start; the run starts by its Start button, with the
  // replay runner doing what `options` say after the recorded start of a 1000-step run.
  struct Session {
    MainWindow window;
    QTemporaryDir output;
    TrainingTab* tab = nullptr;
    RunPanel* panel = nullptr;
  };

  void prepare(Session& s) {
    s.window.resize(1280, 860);
    s.window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&s.window));
    s.tab = s.window.tab(Tab::LoRA);
    s.panel = s.tab->runPanel();
    test::setOption(s.tab->form(), "pretrained_model_name_or_path", checkpoint_.toStdString());
    test::setOption(s.tab->form(), "output_dir", s.output.path().toStdString());
    test::setOption(s.tab->form(), "output_name", std::string("hostile"));
  }

  // Clicks Start and waits for the runner to end; false when it did not start or end in time.
  bool runThroughStart(Session& s, const QString& options, int ms = 120000) {
    qputenv("SINTER_REPLAY_OPTIONS", options.toUtf8());
    QSignalSpy finished(s.panel->controller(), &RunController::finished);
    s.panel->startButton()->click();
    if (!s.panel->isRunning()) return false;
    const bool ended = finished.count() > 0 || finished.wait(ms);
    s.panel->logView()->flush();
    return ended;
  }

 private slots:
  void initTestCase() {
    test::isolateSettings();
    setRunnerPathPreference(QStringLiteral(SINTER_REPLAY_RUNNER));
    qputenv("SINTER_REPLAY_EVENTS", SINTER_GUI_TEST_DATA_DIR "/stoppable_run.events.jsonl");
    checkpoint_ = models_.filePath("sdxl.safetensors");
    QVERIFY(test::writeTinySafetensors(checkpoint_, {"conditioner.embedders.0.x", "model.diffusion_model.y"}));
  }

  void readerCapsALineOfHundredsOfMegabytes() {
    // The splitter alone: whatever streams in without a newline, it holds at most one capped line.
    LineSplitter splitter;
    const QByteArray chunk(1 << 20, 'z');
    for (int i = 0; i < 300; ++i) {
      QVERIFY(splitter.feed(chunk).empty());
      QVERIFY(splitter.bufferedBytes() <= LineSplitter::kMaxLineBytes);
    }
    std::vector<OutputLine> lines = splitter.feed("\ntail\n");
    QCOMPARE(lines.size(), size_t(2));
    QCOMPARE(lines[0].text.size(), LineSplitter::kMaxLineBytes);
    QCOMPARE(lines[0].cutBytes, 300LL * (1 << 20) - LineSplitter::kMaxLineBytes);
    QCOMPARE(lines[1].text, QString("tail"));
    QCOMPARE(lines[1].cutBytes, 0LL);
    // A cut never splits a character: "✓" is 3 bytes, and 64 KiB is not a multiple of 3.
    QByteArray checks;
    for (int i = 0; i < 30000; ++i) checks += "✓";
    lines = splitter.feed(checks + "\n");
    QCOMPARE(lines.size(), size_t(1));
    QCOMPARE(lines[0].text, QString(LineSplitter::kMaxLineBytes / 3, QChar(0x2713)));
    QCOMPARE(lines[0].cutBytes, qint64(checks.size() - LineSplitter::kMaxLineBytes / 3 * 3));
  }

  void hundredsOfMegabytesWithoutANewlineLeaveTheAppUp() {
    Session s;
    prepare(s);
    const qint64 bytes = 300'000'000;
    const bool measured = resetPeakMemory();
    const double before = residentMiB();
    QVERIFY(runThroughStart(s, QStringLiteral("--stdout-bytes %1").arg(bytes)));
    QCOMPARE(s.panel->monitor()->finalStatus(), QString("completed"));
    const QString log = s.panel->logView()->text();
    // The line's start is shown, and how much of it was cut.
    const qint64 cut = qint64(QByteArrayLiteral("no newline: ").size()) + bytes - LineSplitter::kMaxLineBytes;
    QVERIFY(log.contains("no newline: zzzz"));
    QVERIFY2(log.contains(QLocale().formattedDataSize(cut)), qPrintable(log.right(300)));
    QVERIFY(log.contains("not read as an event"));
    QVERIFY(longestLine(log) < LogView::kMaxLineChars + 200);
    if (measured) {
      const double grown = peakMemoryMiB() - before;
      qInfo("peak resident memory grew by %.1f MiB", grown);
      QVERIFY2(grown < 64, qPrintable(QString("peak memory grew by %1 MiB").arg(grown)));
    }
  }

  void megabyteLinesAndEventsAreCutBeforeTheView() {
    Session s;
    prepare(s);
    QVERIFY(runThroughStart(s, "--stdout-line 10000000 --long-event 10000000"));
    QCOMPARE(s.panel->monitor()->finalStatus(), QString("completed"));
    const QString log = s.panel->logView()->text();
    QVERIFY(log.contains("yyyy"));
    QVERIFY(log.contains("{\"type\":\"warning\",\"message\":\"wwww"));  // the event is shown as text, cut
    QVERIFY(!log.contains("Warning: www"));                               // never read as an event
    QVERIFY(log.contains(QLocale().formattedDataSize(10'000'000 - LineSplitter::kMaxLineBytes)));
    QVERIFY(log.contains("characters not shown"));  // the view's own cut, after the reader's
    QVERIFY2(longestLine(log) < LogView::kMaxLineChars + 200, qPrintable(QString::number(longestLine(log))));
    // The view itself cuts any line handed to it.
    s.panel->logView()->appendLine(QString(200000, QLatin1Char('q')));
    s.panel->logView()->flush();
    QVERIFY(longestLine(s.panel->logView()->text()) < LogView::kMaxLineChars + 200);
  }

  void aLongLastLineExplainsAFailureInAFewLines() {
    Session s;
    prepare(s);
    QVERIFY(runThroughStart(s, "--stderr-lines 1 100000 --exit 1"));
    RunMonitor* monitor = s.panel->monitor();
    QCOMPARE(monitor->finalStatus(), QString("failed"));
    QVERIFY(monitor->statusText().contains("[info] long line 1: xxxx"));  // the runner's last word, clipped
    QVERIFY2(monitor->statusText().size() < 600, qPrintable(QString::number(monitor->statusText().size())));
  }

  void thousandsOfLongStderrLinesStayWithinTheCharacterBound() {
    Session s;
    prepare(s);
    LogView* log = s.panel->logView();
    // 2000 cut lines hold 2 M characters; a limit of 1 M keeps the newest half of them.
    const qint64 limit = 1'000'000;
    log->setMaximumCharacters(limit);
    const bool measured = resetPeakMemory();
    const double before = residentMiB();
    QVERIFY(runThroughStart(s, "--stderr-lines 2000 100000"));
    QVERIFY(log->characterCount() <= limit);
    QVERIFY(log->characterCount() > limit - 2 * LogView::kMaxLineChars);
    QVERIFY(log->lineCount() < 1000);
    QCOMPARE(log->characterCount(), qint64(log->text().size()));
    // The newest lines are the ones kept, each cut, and the end of the run after them.
    const QString text = log->text();
    QVERIFY(text.contains("[info] long line 2000: xxxx"));
    QVERIFY(!text.contains("[info] long line 1: "));
    QVERIFY(text.contains("Runner exited with code 0."));
    QVERIFY(longestLine(text) < LogView::kMaxLineChars + 200);
    if (measured) {
      const double grown = peakMemoryMiB() - before;
      qInfo("peak resident memory grew by %.1f MiB", grown);
      QVERIFY2(grown < 100, qPrintable(QString("peak memory grew by %1 MiB").arg(grown)));
    }
  }

  void aFloodOfStepEventsIsCoalescedAndDecimated() {
    Session s;
    prepare(s);
    const int steps = 100000;
    QSignalSpy progressChanges(s.panel->monitor()->progressBar(), &QProgressBar::valueChanged);
    QElapsedTimer clock;
    clock.start();
    QVERIFY(runThroughStart(s, QStringLiteral("--step-flood %1 --done-steps %1").arg(steps)));
    const double seconds = clock.elapsed() / 1000.0;
    RunMonitor* monitor = s.panel->monitor();
    QCOMPARE(monitor->finalStatus(), QString("completed"));
    QCOMPARE(monitor->lastStep(), qint64(steps));
    QCOMPARE(monitor->progressBar()->maximum(), steps);
    QCOMPARE(monitor->progressBar()->value(), steps);
    QVERIFY(monitor->statusText().contains(QString("Completed: %1 steps.").arg(steps)));
    // The progress shows the latest step at most every kStepDisplayMs (plus the start and the end).
    QVERIFY2(progressChanges.count() <= seconds * 1000 / RunMonitor::kStepDisplayMs + 4,
             qPrintable(QString("%1 updates in %2 s").arg(progressChanges.count()).arg(seconds)));

    // Every point is kept; the chart draws at most two a pixel column, its spike included.
    LossChart* chart = s.panel->lossChart();
    QCOMPARE(chart->pointCount(), steps);
    QVERIFY(!chart->isZoomed());  // redrawing moved no axis the way a user's zoom does
    chart->refresh();
    const int columns = int(chart->chart()->plotArea().width());
    QVERIFY(columns > 100);
    QLineSeries* raw = rawSeries(chart);
    QVERIFY2(raw->count() <= 2 * columns + 2, qPrintable(QString("%1 points for %2 columns").arg(raw->count()).arg(columns)));
    QVERIFY(raw->count() >= columns);
    const QList<QPointF> shown = raw->points();
    QVERIFY(std::is_sorted(shown.begin(), shown.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); }));
    const auto highest = std::max_element(shown.begin(), shown.end(), [](const QPointF& a, const QPointF& b) { return a.y() < b.y(); });
    QCOMPARE(highest->x(), double(steps / 2));  // the one spike (loss + 1) survives decimation
    QVERIFY(highest->y() > 1.0);
    const auto lowest = std::min_element(shown.begin(), shown.end(), [](const QPointF& a, const QPointF& b) { return a.y() < b.y(); });
    QVERIFY(qAbs(lowest->y() - 0.1) < 1e-9);  // the floor of the replayed losses

    // Zoomed in (the rubber band's own call) to 100 steps: every point there is drawn.
    const QPointF from = chart->chart()->mapToPosition(QPointF(5000, 0), raw);
    const QPointF to = chart->chart()->mapToPosition(QPointF(5100, 0), raw);
    const QRectF plot = chart->chart()->plotArea();
    chart->chart()->zoomIn(QRectF(from.x(), plot.top(), to.x() - from.x(), plot.height()));
    QVERIFY(chart->isZoomed());
    chart->refresh();
    auto* axisX = qobject_cast<QValueAxis*>(chart->chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(axisX);
    int inside = 0;
    for (const QPointF& p : raw->points()) inside += p.x() >= axisX->min() && p.x() <= axisX->max();
    QCOMPARE(inside, int(std::floor(axisX->max()) - std::ceil(axisX->min())) + 1);
    QVERIFY(inside >= 90 && inside <= 110);
    // A right click shows the whole run again.
    QTest::mouseClick(chart->viewport(), Qt::RightButton, {}, chart->viewport()->rect().center());
    QVERIFY(!chart->isZoomed());
    QVERIFY(raw->count() <= 2 * columns + 2);
    QCOMPARE(axisX->max(), double(steps));
  }

  void anAbsurdDoneCountIsNotShown() {
    Session s;
    prepare(s);
    QVERIFY(runThroughStart(s, "--step-flood 5 1000 --done-steps 3000000000"));
    RunMonitor* monitor = s.panel->monitor();
    QCOMPARE(monitor->finalStatus(), QString("completed"));
    QVERIFY2(monitor->statusText().contains("Completed: 5 steps."), qPrintable(monitor->statusText()));
    QVERIFY(!monitor->statusText().contains("3000000000"));
    QCOMPARE(monitor->lastStep(), 5LL);
    // The log says what the runner claimed and why it is not shown.
    const QString log = s.panel->logView()->text();
    QVERIFY2(log.contains("counts 3000000000 steps, not between 0 and the run's 1000"), qPrintable(log.right(400)));

    QVERIFY(runThroughStart(s, "--step-flood 5 1000 --done-steps -7"));
    QVERIFY(monitor->statusText().contains("Completed: 5 steps."));
    QVERIFY(s.panel->logView()->text().contains("counts -7 steps"));

    // A count the run allows is shown (the runner stopped counting events early, say).
    QVERIFY(runThroughStart(s, "--step-flood 5 1000 --done-steps 7"));
    QVERIFY(monitor->statusText().contains("Completed: 7 steps."));
  }

  void aFolderChosenAsTheRunnerIsNamedAsOne() {
    Session s;
    prepare(s);
    QTemporaryDir folder;
    setRunnerPathPreference(folder.path());
    QSignalSpy failed(s.panel->controller(), &RunController::failedToStart);
    s.panel->startButton()->click();
    QVERIFY(failed.count() > 0 || failed.wait(5000));
    setRunnerPathPreference(QStringLiteral(SINTER_REPLAY_RUNNER));
    RunMonitor* monitor = s.panel->monitor();
    QCOMPARE(monitor->finalStatus(), QString("failed"));
    QVERIFY2(monitor->statusText().contains(folder.path() + ": it is a folder, not a program"), qPrintable(monitor->statusText()));
    QVERIFY(!monitor->statusText().contains("Permission denied"));
    QVERIFY(s.panel->startButton()->isEnabled());
  }
};

QTEST_MAIN(HostileRunnerTest)
#include "hostile_runner_test.moc"

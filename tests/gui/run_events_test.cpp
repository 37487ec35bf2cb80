// Runs: the event stream and the log of a real process (recorded runner sessions replayed by
// gui_replay_runner, and the real sinter-runner when this build has it) drive the progress bar,
// warm-up phase, loss chart, log view and final status; Stop and Force stop.
#include <QLegendMarker>
#include <QLineSeries>
#include <QXYSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "gui_test_support.h"
#include "log_view.h"
#include "loss_chart.h"
#include "run_controller.h"
#include "run_monitor.h"
#include "run_panel.h"

using namespace sinter;
using namespace sinter::gui;

namespace {
const QString kData = QStringLiteral(SINTER_GUI_TEST_DATA_DIR);
const QString kReplay = QStringLiteral(SINTER_REPLAY_RUNNER);

QStringList replayArgs(const QString& name, QStringList extra = {}) {
  QStringList args{kData + "/" + name + ".events.jsonl"};
  if (QFile::exists(kData + "/" + name + ".stderr.txt")) args << "--stderr" << kData + "/" + name + ".stderr.txt";
  return args + extra;
}

bool waitForFinish(RunPanel& panel, int ms = 15000) {
  QSignalSpy spy(panel.controller(), &RunController::finished);
  if (!panel.isRunning()) return true;
  return spy.wait(ms);
}
}  // namespace

class RunEventsTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void completedRunDrivesProgressChartAndStatus() {
    RunPanel panel;
    std::vector<RunMonitor::Phase> phases;
    connect(panel.controller(), &RunController::eventReceived, this,
            [&] { phases.push_back(panel.monitor()->phase()); });
    panel.startProcess(kReplay, replayArgs("completed_run", {"--delay-ms", "5"}), QString());
    QVERIFY(!panel.startButton()->isEnabled());
    QVERIFY(waitForFinish(panel));
    panel.logView()->flush();
    RunMonitor* m = panel.monitor();
    QCOMPARE(m->finalStatus(), QString("completed"));
    QCOMPARE(m->progressBar()->maximum(), 6);
    QCOMPARE(m->progressBar()->value(), 6);
    QCOMPARE(m->warmupSeconds(), 4.0);
    QCOMPARE(panel.lossChart()->pointCount(), 6);
    QVERIFY(panel.lossChart()->smoothedLast() > 0.11 && panel.lossChart()->smoothedLast() < 0.20);
    // Warm-up was its own phase, between start and the first step.
    QVERIFY(std::find(phases.begin(), phases.end(), RunMonitor::Phase::WarmingUp) != phases.end());
    QVERIFY(std::find(phases.begin(), phases.end(), RunMonitor::Phase::Training) != phases.end());
    const QString log = panel.logView()->text();
    QVERIFY(log.contains("Loading SDXL checkpoint"));
    QVERIFY(log.contains("Compiling unet with torch.compile"));
    QVERIFY(log.contains("steps: 100%| 6/6"));
    QVERIFY(!log.contains("steps:  33%"));  // progress redraws (\r) replace each other
    QVERIFY(log.contains("Warning: sample_prompts is empty"));
    QVERIFY(log.contains("not json at all"));  // a stray stdout line is shown, not lost
    QVERIFY(!log.contains("telemetry"));       // unknown events are ignored
    QVERIFY(panel.startButton()->isEnabled());
  }

  void validationEventsAddPointsToTheValidationSeries() {
    RunPanel panel;
    LossChart* chart = panel.lossChart();
    const auto validationMarker = [&] { return chart->chart()->legend()->markers(chart->chart()->series().at(2)).value(0); };
    QVERIFY(validationMarker() && !validationMarker()->isVisible());  // no validation, no legend entry
    panel.startProcess(kReplay, replayArgs("validation_run", {"--delay-ms", "2"}), QString());
    QVERIFY(waitForFinish(panel));
    QCOMPARE(panel.monitor()->finalStatus(), QString("completed"));
    QCOMPARE(chart->pointCount(), 6);
    QCOMPARE(chart->validationPointCount(), 3);
    auto* series = qobject_cast<QLineSeries*>(chart->chart()->series().at(2));
    QVERIFY(series);
    QCOMPARE(series->name(), QString("Validation loss"));
    QCOMPARE(series->at(0), QPointF(2, 0.31));
    QCOMPARE(series->at(1), QPointF(3, 0.29));
    QCOMPARE(series->at(2), QPointF(6, 0.27));
    QVERIFY(validationMarker()->isVisible());
    chart->addValidationPoint(7, std::nan(""));  // not finite: not drawn
    QCOMPARE(chart->validationPointCount(), 3);
    chart->clear();
    QCOMPARE(chart->validationPointCount(), 0);
    QVERIFY(!validationMarker()->isVisible());
  }

  void bestFilesAndTheEarlyStopAreMarkedOnTheChart() {
    // A recorded run with save_best_k = 2 and early_stop_patience = 2: best files after steps 2, 4
    // and 6 (step 2's dropped out when 6's was saved), the run ended early after step 8.
    RunPanel panel;
    LossChart* chart = panel.lossChart();
    panel.startProcess(kReplay, replayArgs("best_validation_run", {"--delay-ms", "2"}), QString());
    QVERIFY(waitForFinish(panel));
    QCOMPARE(panel.monitor()->finalStatus(), QString("completed"));
    QCOMPARE(chart->validationPointCount(), 4);
    QCOMPARE(chart->bestPoints(), (QVector<QPointF>{QPointF(4, 0.25), QPointF(6, 0.28)}));
    QVERIFY(chart->earlyStopPoint());
    QCOMPARE(*chart->earlyStopPoint(), QPointF(8, 0.30));
    auto* best = qobject_cast<QXYSeries*>(chart->chart()->series().at(3));
    QVERIFY(best);
    QCOMPARE(best->name(), QString("Kept best (validation)"));
    QCOMPARE(best->count(), 2);
    QVERIFY(chart->chart()->legend()->markers(best).value(0)->isVisible());
    QVERIFY(panel.monitor()->statusText().contains("stopped early at step 8"));
    QVERIFY(panel.monitor()->statusText().contains("early_stop_patience"));
    chart->clear();
    QVERIFY(chart->bestPoints().isEmpty());
    QVERIFY(!chart->earlyStopPoint());
    QVERIFY(!chart->chart()->legend()->markers(best).value(0)->isVisible());
  }

  void failedRunShowsExitCodeAndLastError() {
    RunPanel panel;
    panel.startProcess(kReplay, replayArgs("failed_run", {"--exit", "1"}), QString());
    QVERIFY(waitForFinish(panel));
    QCOMPARE(panel.monitor()->finalStatus(), QString("failed"));
    QVERIFY(panel.monitor()->statusText().contains("exit code 1"));
    QVERIFY(panel.monitor()->statusText().contains("loss is NaN at step 2"));
  }

  void doneFailedIsAFailureEvenWithExitZero() {
    RunPanel panel;
    panel.startProcess(kReplay, replayArgs("failed_run", {"--exit", "0"}), QString());
    QVERIFY(waitForFinish(panel));
    QCOMPARE(panel.monitor()->finalStatus(), QString("failed"));
    QVERIFY(panel.monitor()->statusText().contains("loss is NaN"));
  }

  void refusedConfigSaysNothingWasTrained() {
    RunPanel panel;
    panel.startProcess(kReplay, replayArgs("refused_run", {"--exit", "2"}), QString());
    QVERIFY(waitForFinish(panel));
    QCOMPARE(panel.monitor()->finalStatus(), QString("failed"));
    QVERIFY(panel.monitor()->statusText().contains("exit code 2"));
    QVERIFY(panel.monitor()->statusText().contains("training is not in this build"));
  }

  void stopAsksTheRunnerToSaveAndExit() {
    RunPanel panel;
    panel.startProcess(kReplay, replayArgs("stoppable_run", {"--until-term"}), QString());
    QTRY_VERIFY_WITH_TIMEOUT(panel.monitor()->lastStep() >= 3, 10000);
    QVERIFY(panel.stopButton()->isEnabled());
    panel.stopButton()->click();
    QVERIFY(waitForFinish(panel));
    QCOMPARE(panel.monitor()->finalStatus(), QString("stopped"));
    QVERIFY(panel.monitor()->statusText().contains("saved"));
    QVERIFY(!panel.controller()->forceStopped());
  }

  void forceStopIsOfferedWhenTheRunnerDoesNotStop() {
    RunPanel panel;
    panel.controller()->setForceStopDelay(200);
    panel.startProcess(kReplay, replayArgs("stoppable_run", {"--ignore-term"}), QString());
    QTRY_VERIFY_WITH_TIMEOUT(panel.monitor()->lastStep() >= 2, 10000);
    QSignalSpy offered(panel.controller(), &RunController::forceStopAvailable);
    panel.requestStop();
    QVERIFY(offered.wait(5000));
    QVERIFY(!panel.forceStopButton()->isHidden());
    panel.forceStopButton()->click();
    QVERIFY(waitForFinish(panel));
    QCOMPARE(panel.monitor()->finalStatus(), QString("stopped"));
    QVERIFY(panel.controller()->forceStopped());
    QVERIFY(panel.monitor()->statusText().contains("Force-stopped"));
  }

  void missingRunnerFailsToStartWithAMessage() {
    RunPanel panel;
    QSignalSpy spy(panel.controller(), &RunController::failedToStart);
    panel.startProcess("/nonexistent/sinter-runner", {"--config_file", "x.toml"}, QString());
    QVERIFY(spy.count() > 0 || spy.wait(5000));
    QCOMPARE(panel.monitor()->finalStatus(), QString("failed"));
    QVERIFY(panel.monitor()->statusText().contains("/nonexistent/sinter-runner"));
    QVERIFY(panel.startButton()->isEnabled());
  }

  // The start event's dataset totals are in the status line (the skipped files are named in the log).
  void startEventShowsTheDatasetTotals() {
    RunMonitor monitor;
    events::Start start{"0.1.0", "cpu", "sdxl", "lora", 20, 1};
    start.images = 40;
    start.skipped = 3;
    monitor.handleEvent(start);
    QVERIFY2(monitor.statusText().contains("40 images, 3 skipped"), qPrintable(monitor.statusText()));
    start.skipped = 0;
    monitor.handleEvent(start);
    QVERIFY2(monitor.statusText().contains("40 images") && !monitor.statusText().contains("skipped"), qPrintable(monitor.statusText()));
  }
};

QTEST_MAIN(RunEventsTest)
#include "run_events_test.moc"

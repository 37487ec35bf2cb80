// The app against the real sinter-runner (built beside it, or named by $SINTER_RUNNER): a refused
// config reaches the status line with the runner's own message, the tiny demo preset trains with
// its events driving the progress bar and the loss chart, and on two ranks (the GPUs setting) it
// trains and stops as one run; the controls during a run (Sample now, Save now, Pause/Resume, Stop
// after this epoch) are acknowledged and acted on.
#include <QDir>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "app_paths.h"
#include "compile_settings_panel.h"
#include "option_form.h"
#include "demo_folder.h"
#include "gui_test_support.h"
#include "log_view.h"
#include "loss_chart.h"
#include "run_controller.h"
#include "run_monitor.h"
#include "run_panel.h"
#include "training_tab.h"

using namespace sinter;
using namespace sinter::gui;

namespace {
using test::DemoFolder;
using test::realRunner;

int runToEnd(TrainingTab& tab, int timeoutMs) {
  QSignalSpy finished(tab.runPanel()->controller(), &RunController::finished);
  QSignalSpy errors(&tab, &TrainingTab::errorReported);
  if (!tab.startRun()) {
    qWarning() << "start refused:" << (errors.isEmpty() ? QString() : errors.first().at(1).toString());
    return -1;
  }
  if (!finished.wait(timeoutMs)) return -2;
  tab.runPanel()->logView()->flush();
  return finished.first().at(0).toInt();
}
}  // namespace

class RealRunnerTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    test::isolateSettings();
    if (!QFileInfo(realRunner()).isExecutable()) QSKIP("sinter-runner is not built in this build tree");
    setRunnerPathPreference(realRunner());
  }

  // The Torch Compile panel shows the runner's own plan for the form's config: FLUX's fused kernels
  // for FLUX, SDXL's for SDXL, compile off as off, and the runner's refusal as one.
  void compilePanelShowsTheRunnersPlan() {
    OptionForm form(Tab::LoRA);
    form.show();  // the panel asks the runner while it is on screen: Advanced open, the panel open
    form.advancedSection()->setExpanded(true);
    test::setOption(&form, "model_family", std::string("flux"));
    test::setOption(&form, "compile", true);
    test::setOption(&form, "compile_mode", std::string("reduce-overhead"));
    CompileSettingsPanel* panel = form.compilePanel();
    QTRY_VERIFY_WITH_TIMEOUT(panel->runnerPlanText().contains("Compiling DiT model"), 30000);
    QVERIFY2(panel->runnerPlanText().contains("QK RMSNorm+RoPE"), qPrintable(panel->runnerPlanText()));
    QVERIFY(!panel->runnerPlanText().contains("GEGLU"));
    test::setOption(&form, "model_family", std::string("sdxl"));
    QTRY_VERIFY_WITH_TIMEOUT(panel->runnerPlanText().contains("Compiling U-Net"), 30000);
    QVERIFY2(panel->runnerPlanText().contains("GEGLU"), qPrintable(panel->runnerPlanText()));
    test::setOption(&form, "compile", false);
    QTRY_COMPARE_WITH_TIMEOUT(panel->runnerPlanText(), QString("compile: off"), 30000);
  }

  void refusedConfigShowsTheRunnersMessage() {
    QTemporaryDir dir;
    TrainingTab tab(Tab::LoRA, nullptr, {});
    test::setOption(tab.form(), "model_family", std::string("sdxl"));
    test::setOption(tab.form(), "pretrained_model_name_or_path", dir.filePath("missing.safetensors").toStdString());
    test::setOption(tab.form(), "output_dir", dir.path().toStdString());
    QCOMPARE(runToEnd(tab, 60000), 2);
    RunMonitor* m = tab.runPanel()->monitor();
    QCOMPARE(m->finalStatus(), QString("failed"));
    QVERIFY(m->statusText().contains("exit code 2"));
    QVERIFY(m->statusText().contains("nothing was trained"));
    const QString log = tab.runPanel()->logView()->text();
    QVERIFY2(log.contains("Runner exited with code 2"), qPrintable(log));
    QVERIFY2(log.split('\n').size() >= 2, qPrintable(log));  // the runner's own explanation is shown
  }

  // Continue with changed settings (issue 57 item 5), as a user does it in the form: the demo trained
  // 3 steps with save_state, then resumed from its state with another learning rate, schedule and
  // step count: the run goes on at step 4 to 5 and its log lists each change; a changed rank is
  // refused with the state's value and the form's.
  void continueWithChangedSettingsKeepsTheStepCount() {
    DemoFolder work;
    QVERIFY2(work.failure.isEmpty(), qPrintable(work.failure));
    TrainingTab tab(Tab::LoRA, nullptr, {});
    QString error;
    QVERIFY2(tab.loadFile(QStringLiteral(SINTER_PRESETS_DIR "/demo_sdxl_lora_tiny.toml"), &error), qPrintable(error));
    test::setOption(tab.form(), "max_train_steps", 3LL);
    test::setOption(tab.form(), "sample_every_n_steps", 1000LL);
    test::setOption(tab.form(), "resolution", std::string("64,64"));
    test::setOption(tab.form(), "save_state", true);
    QCOMPARE(runToEnd(tab, 600000), 0);
    QCOMPARE(tab.runPanel()->monitor()->lastStep(), 3LL);
    QVERIFY(QFileInfo::exists(work.filePath("demo-output/lora/demo_lora-state/train_state.json")));

    test::setOption(tab.form(), "resume", std::string("demo-output/lora/demo_lora-state"));
    test::setOption(tab.form(), "max_train_steps", 5LL);
    test::setOption(tab.form(), "learning_rate", 0.005);
    test::setOption(tab.form(), "lr_scheduler", std::string("cosine"));
    QCOMPARE(runToEnd(tab, 600000), 0);
    QCOMPARE(tab.runPanel()->monitor()->lastStep(), 5LL);
    const QString log = tab.runPanel()->logView()->text();
    for (const char* says : {"resumed from demo-output/lora/demo_lora-state at step 3 (epoch 1) of 5", "learning_rate: 0.01 -> 0.005",
                             "lr_scheduler: constant -> cosine", "max_train_steps: 3 -> 5"})
      QVERIFY2(log.contains(says), qPrintable(QString(says) + "\n" + log.right(3000)));

    test::setOption(tab.form(), "network_dim", 16LL);
    QCOMPARE(runToEnd(tab, 600000), 2);
    const QString refused = tab.runPanel()->logView()->text();
    QVERIFY2(refused.contains("network_dim: 8 in the state, 16 now"), qPrintable(refused.right(3000)));
  }

  void tinyDemoPresetTrains() {
    const QString preset = QStringLiteral(SINTER_PRESETS_DIR "/demo_sdxl_lora_tiny.toml");
    QVERIFY2(QFile::exists(preset), "presets/demo_sdxl_lora_tiny.toml is missing");
    DemoFolder work;
    QVERIFY2(work.failure.isEmpty(), qPrintable(work.failure));
    TrainingTab tab(Tab::LoRA, nullptr, {});
    QString error;
    QVERIFY2(tab.loadFile(preset, &error), qPrintable(error));
    QCOMPARE(tab.family(), std::optional<Family>(Family::SDXL));
    // The preset as shipped, cut to 30 of its 120 steps (sampling every 30 of them, not 60): all this test
    // looks at, at a quarter of the work.
    test::setOption(tab.form(), "max_train_steps", 30LL);
    test::setOption(tab.form(), "sample_every_n_steps", 30LL);
    const int code = runToEnd(tab, 840000);
    const QString log = tab.runPanel()->logView()->text();
    QVERIFY2(code == 0, qPrintable(QString("exit %1\n%2").arg(code).arg(log.right(3000))));
    RunMonitor* m = tab.runPanel()->monitor();
    QCOMPARE(m->finalStatus(), QString("completed"));
    QVERIFY(m->lastStep() > 0);
    QCOMPARE(m->progressBar()->value(), m->progressBar()->maximum());
    QVERIFY(tab.runPanel()->lossChart()->pointCount() > 0);
    QVERIFY(QFile::exists(work.filePath("demo-output/lora/demo_lora.safetensors")));
    // Cut to 30 steps and sampling every 30, the run samples once, at step 30: both prompts.
    QVERIFY2(QDir(work.filePath("demo-output/lora/sample")).entryList({QStringLiteral("*.png")}).size() == 2,
             qPrintable(QDir(work.filePath("demo-output/lora/sample")).entryList().join(", ")));
  }

  // The controls during a run, pressed as a user would: each is acknowledged in the log and the
  // status line and acted on (a sample PNG, a saved LoRA, a pause with no steps, the run's end
  // after the epoch). The demo at 64x64 in batches of 6: 20 steps an epoch.
  void controlsDuringARunAreAcknowledgedAndActedOn() {
    DemoFolder work;
    QVERIFY2(work.failure.isEmpty(), qPrintable(work.failure));
    TrainingTab tab(Tab::LoRA, nullptr, {});
    QString error;
    QVERIFY2(tab.loadFile(QStringLiteral(SINTER_PRESETS_DIR "/demo_sdxl_lora_tiny.toml"), &error), qPrintable(error));
    test::setOption(tab.form(), "max_train_steps", 400LL);
    test::setOption(tab.form(), "resolution", std::string("64,64"));
    test::setOption(tab.form(), "train_batch_size", 6LL);
    RunPanel* panel = tab.runPanel();
    RunMonitor* m = panel->monitor();
    LogView* log = panel->logView();
    auto logText = [log] {
      log->flush();
      return log->text();
    };
    QVERIFY(!panel->sampleNowButton()->isEnabled());
    QVERIFY(!panel->pauseButton()->isEnabled());
    QSignalSpy finished(panel->controller(), &RunController::finished);
    QVERIFY(tab.startRun());
    QVERIFY(panel->sampleNowButton()->isEnabled() && panel->saveNowButton()->isEnabled());
    QVERIFY(panel->stopAfterEpochButton()->isEnabled() && panel->pauseButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(m->lastStep() >= 1 || !finished.isEmpty(), 300000);

    const QString samples = work.filePath("demo-output/lora/sample");
    panel->sampleNowButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(logText().contains("Sample now: sample images made at step") || !finished.isEmpty(), 120000);
    QVERIFY2(QDir(samples).entryList({QStringLiteral("*.png")}).size() == 2, qPrintable(logText().right(3000)));
    QVERIFY(m->statusText().contains("Sample now"));

    panel->saveNowButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(logText().contains("Save now: saved at step") || !finished.isEmpty(), 120000);
    const QString lora = work.filePath("demo-output/lora");
    QVERIFY2(QDir(lora).entryList({QStringLiteral("demo_lora-step*.safetensors")}).size() == 1, qPrintable(logText().right(3000)));

    QCOMPARE(panel->pauseButton()->text(), QString("Pause"));
    panel->pauseButton()->click();
    QCOMPARE(panel->pauseButton()->text(), QString("Resume"));
    QTRY_VERIFY_WITH_TIMEOUT(m->isPaused() || !finished.isEmpty(), 120000);
    QVERIFY2(logText().contains("Paused after step"), qPrintable(logText().right(3000)));
    QVERIFY(m->statusText().contains("Paused after step"));
    const long long pausedAt = m->lastStep();
    QTest::qWait(1500);  // paused: no step comes
    QCOMPARE(m->lastStep(), pausedAt);
    QCOMPARE(panel->pauseButton()->text(), QString("Resume"));
    panel->pauseButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(logText().contains("Resumed at step") || !finished.isEmpty(), 120000);
    QVERIFY(!m->isPaused());
    QCOMPARE(panel->pauseButton()->text(), QString("Pause"));
    QTRY_VERIFY_WITH_TIMEOUT(m->lastStep() > pausedAt || !finished.isEmpty(), 120000);

    panel->stopAfterEpochButton()->click();
    QVERIFY(!panel->stopAfterEpochButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(logText().contains("the run ends after epoch") || !finished.isEmpty(), 120000);
    const bool ended = !finished.isEmpty() || finished.wait(300000);
    const QString text = logText();
    QVERIFY2(ended, qPrintable(text.right(3000)));
    QVERIFY2(finished.first().at(0).toInt() == 0, qPrintable(text.right(3000)));
    QCOMPARE(m->finalStatus(), QString("completed"));
    QVERIFY2(m->lastStep() % 20 == 0 && m->lastStep() < 400, qPrintable(QString::number(m->lastStep())));
    QVERIFY2(text.contains("the run ended after epoch"), qPrintable(text.right(3000)));
    QVERIFY(QFile::exists(work.filePath("demo-output/lora/demo_lora.safetensors")));
    QVERIFY(!panel->sampleNowButton()->isEnabled() && !panel->pauseButton()->isEnabled());
  }

  // The GPUs setting at 2 (two processes on the CPU here, over Gloo): the app reads rank 0's events
  // through the launcher, and Stop reaches both ranks, which stop after the same step and save.
  void twoRanksTrainAndStopSaves() {
    DemoFolder work;
    QVERIFY2(work.failure.isEmpty(), qPrintable(work.failure));
    TrainingTab tab(Tab::LoRA, nullptr, {});
    QString error;
    QVERIFY2(tab.loadFile(QStringLiteral(SINTER_PRESETS_DIR "/demo_sdxl_lora_tiny.toml"), &error), qPrintable(error));
    test::setOption(tab.form(), "max_train_steps", 400LL);
    tab.runPanel()->gpuCountBox()->setValue(2);
    QSignalSpy finished(tab.runPanel()->controller(), &RunController::finished);
    QVERIFY(tab.startRun());
    RunMonitor* m = tab.runPanel()->monitor();
    QTRY_VERIFY_WITH_TIMEOUT(m->lastStep() >= 3 || !finished.isEmpty(), 300000);
    tab.runPanel()->requestStop();
    const bool ended = !finished.isEmpty() || finished.wait(300000);
    tab.runPanel()->gpuCountBox()->setValue(1);
    tab.runPanel()->logView()->flush();
    const QString log = tab.runPanel()->logView()->text();
    QVERIFY2(ended, qPrintable(log.right(3000)));
    QVERIFY2(finished.first().at(0).toInt() == 0, qPrintable(log.right(3000)));
    QCOMPARE(m->finalStatus(), QString("stopped"));
    QVERIFY2(log.contains("all 2 workers finished"), qPrintable(log.right(3000)));
    QVERIFY2(log.contains("data parallel: rank 0 of 2"), qPrintable(log.left(3000)));
    const QStringList saved = QDir(work.filePath("demo-output/lora")).entryList({QStringLiteral("demo_lora-step*.safetensors")});
    QVERIFY2(saved.size() == 1, qPrintable(saved.join(", ")));
  }
};

QTEST_MAIN(RealRunnerTest)
#include "real_runner_test.moc"

// The run queue in the real window with the real sinter-runner on the tiny demo (CPU, a few steps a
// run): three entries, the second failing, all run in order with their statuses (the queue goes on),
// the end command run and the end shown; the window closed mid-queue (the run paused, then stopped
// and saved) and opened again: the entry interrupted, Resume offered and taken, the queue finished;
// and an app that died mid-run (the queue file left saying `running`): interrupted on the next
// start, with its last saved state offered.
#include <QDockWidget>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTreeWidget>
#include <QtTest>
#include <memory>

#include "app_paths.h"
#include "core/run_queue.h"
#include "core/saved_train_state.h"
#include "demo_folder.h"
#include "gui_test_support.h"
#include "log_view.h"
#include "main_window.h"
#include "queue_panel.h"
#include "queue_runner.h"
#include "queue_store.h"
#include "run_controller.h"
#include "run_monitor.h"
#include "run_panel.h"
#include "training_tab.h"

using namespace sinter;
using namespace sinter::gui;

namespace {
using test::DemoFolder;

const QString kPreset = QStringLiteral(SINTER_PRESETS_DIR "/demo_sdxl_lora_tiny.toml");

// The demo preset in the LoRA tab at 64x64, `steps` steps (fewer than its 60 between samples).
void loadDemo(TrainingTab* tab, long long steps) {
  QString error;
  QVERIFY2(tab->loadFile(kPreset, &error), qPrintable(error));
  test::setOption(tab->form(), "max_train_steps", steps);
  test::setOption(tab->form(), "resolution", std::string("64,64"));
}

QStringList statusColumn(QueuePanel* panel) {
  QStringList out;
  for (int i = 0; i < panel->list()->topLevelItemCount(); ++i) out << panel->list()->topLevelItem(i)->text(2);
  return out;
}

// The queue file as the next start reads it.
RunQueue queueOnDisk(QueuePanel* panel) { return loadRunQueueFile(panel->store()->filePath().toStdString()); }

// Closes the window as a user would: "stop the runs and quit?" Yes, unsaved settings discarded.
void closeDiscardingChanges(MainWindow& window) {
  test::whenModalAppears([](QWidget* w) {
    auto* box = qobject_cast<QMessageBox*>(w);
    if (box && box->button(QMessageBox::Yes)) box->button(QMessageBox::Yes)->click();
    test::whenModalAppears([](QWidget* w2) {
      if (auto* b = qobject_cast<QMessageBox*>(w2); b && b->button(QMessageBox::Discard)) b->button(QMessageBox::Discard)->click();
    });
  });
  window.close();
}
}  // namespace

class QueueTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    test::isolateSettings();
    if (!QFileInfo(test::realRunner()).isExecutable()) QSKIP("sinter-runner is not built in this build tree");
    setRunnerPathPreference(test::realRunner());
  }

  void cleanup() {
    // Each test starts from an empty queue (the app's folder under the test's own home).
    QDir(QueueStore::defaultFolder()).removeRecursively();
  }

  void threeRunsTheSecondFailingAreAllProcessed() {
    DemoFolder work;
    QVERIFY2(work.failure.isEmpty(), qPrintable(work.failure));
    MainWindow window;
    window.show();
    QueuePanel* panel = window.queuePanel();
    QVERIFY(panel->store()->isUsable());
    QVERIFY(panel->store()->queue().entries.empty());
    QVERIFY(!window.queueDock()->isVisible());  // an empty queue stays out of the way
    TrainingTab* lora = window.tab(Tab::LoRA);
    window.tabs()->setCurrentWidget(lora);
    loadDemo(lora, 3);
    QVERIFY(panel->addCurrentConfig());
    // The second: a checkpoint that is not there, which the runner refuses (exit 2).
    test::setOption(lora->form(), "pretrained_model_name_or_path", std::string("demo-output/missing.safetensors"));
    QVERIFY(panel->addCurrentConfig());
    QVERIFY2(panel->statusText().contains("lora-2"), qPrintable(panel->statusText()));  // said when added
    test::setOption(lora->form(), "pretrained_model_name_or_path", std::string("demo-output/tiny_sdxl.safetensors"));
    test::setOption(lora->form(), "output_name", std::string("third"));
    QVERIFY(panel->addCurrentConfig());
    QCOMPARE(statusColumn(panel), QStringList({"Pending", "Pending", "Pending"}));
    const RunQueue& queue = panel->store()->queue();
    // Each its own snapshot; the second would write the first's files, so it has a folder of its own.
    QCOMPARE(QString::fromStdString(queue.entries[0].config), QString("runs/0001.toml"));
    QCOMPARE(QString::fromStdString(queue.entries[2].config), QString("runs/0003.toml"));
    QCOMPARE(QString::fromStdString(queue.entries[0].outputDir), work.filePath("demo-output/lora"));
    QCOMPARE(QString::fromStdString(queue.entries[1].outputDir), work.filePath("demo-output/lora-2"));
    QCOMPARE(QString::fromStdString(queue.entries[2].outputDir), work.filePath("demo-output/lora"));  // another output name

    const QString ended = work.filePath("ended");
    panel->endCommandEdit()->setText(QStringLiteral("touch \"%1\"").arg(ended));
    QTest::keyClick(panel->endCommandEdit(), Qt::Key_Return);
    QCOMPARE(queueOnDisk(panel).onEndCommand, (std::vector<std::string>{"touch", ended.toStdString()}));

    QSignalSpy queueEnded(panel, &QueuePanel::queueEnded);
    panel->startButton()->click();
    QVERIFY(panel->runner()->isRunning());
    QVERIFY(!panel->startButton()->isEnabled());
    QVERIFY(panel->stopButton()->isEnabled());
    QVERIFY(queueEnded.wait(600000));
    lora->runPanel()->logView()->flush();
    const QString log = lora->runPanel()->logView()->text();

    QCOMPARE(statusColumn(panel), QStringList({"Done", "Failed", "Done"}));
    const RunQueue disk = queueOnDisk(panel);
    QCOMPARE(disk.entries[0].status, QueueStatus::Done);
    QCOMPARE(disk.entries[1].status, QueueStatus::Failed);
    QCOMPARE(disk.entries[2].status, QueueStatus::Done);
    QVERIFY2(QString::fromStdString(disk.entries[1].message).contains("exit code 2"), disk.entries[1].message.c_str());
    QVERIFY2(QString::fromStdString(disk.entries[0].message).contains("Completed: 3 steps"), disk.entries[0].message.c_str());
    QVERIFY(QFile::exists(work.filePath("demo-output/lora/demo_lora.safetensors")));
    QVERIFY(QFile::exists(work.filePath("demo-output/lora/third.safetensors")));
    QVERIFY(!QFile::exists(work.filePath("demo-output/lora-2")));
    // The last run went through the LoRA tab's run panel, as Start does.
    QVERIFY2(log.contains("Queue: run 3 of 3"), qPrintable(log.right(2000)));
    QCOMPARE(lora->runPanel()->monitor()->finalStatus(), QString("completed"));

    const QString summary = queueEnded.first().at(0).toString();
    QCOMPARE(summary, QString("The queue has ended: 2 done, 1 failed, 0 interrupted, 0 pending."));
    QCOMPARE(window.statusBar()->currentMessage(), summary);
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(ended), 30000);  // the end command, started detached
    QVERIFY(panel->startButton()->isEnabled());
    QVERIFY(!panel->stopButton()->isEnabled());
  }

  void closedMidQueueTheRunIsInterruptedAndResumes() {
    DemoFolder work;
    QVERIFY2(work.failure.isEmpty(), qPrintable(work.failure));
    QString stateFolder;
    {
      MainWindow window;
      window.show();
      QueuePanel* panel = window.queuePanel();
      TrainingTab* lora = window.tab(Tab::LoRA);
      window.tabs()->setCurrentWidget(lora);
      loadDemo(lora, 12);
      QVERIFY(panel->addCurrentConfig());
      test::setOption(lora->form(), "max_train_steps", 2LL);
      test::setOption(lora->form(), "output_name", std::string("after"));
      QVERIFY(panel->addCurrentConfig());
      panel->startButton()->click();
      // Paused after its first step, the run cannot end before the window closes.
      RunMonitor* monitor = lora->runPanel()->monitor();
      QTRY_VERIFY_WITH_TIMEOUT(monitor->lastStep() >= 1 || !lora->isRunning(), 300000);
      QVERIFY(lora->isRunning());
      lora->runPanel()->pauseButton()->click();
      QTRY_VERIFY_WITH_TIMEOUT(monitor->isPaused() || !lora->isRunning(), 300000);
      QVERIFY(monitor->isPaused());
      QCOMPARE(queueOnDisk(panel).entries[0].status, QueueStatus::Running);

      closeDiscardingChanges(window);
      QTRY_VERIFY_WITH_TIMEOUT(!window.isVisible(), 300000);
      QCOMPARE(monitor->finalStatus(), QString("stopped"));  // it saved
      const RunQueue disk = queueOnDisk(panel);
      QCOMPARE(disk.entries[0].status, QueueStatus::Interrupted);
      QCOMPARE(disk.entries[1].status, QueueStatus::Pending);  // nothing more started
      QVERIFY(!QFile::exists(work.filePath("demo-output/lora/after.safetensors")));
      const auto state = findLastSavedTrainState(work.filePath("demo-output/lora").toStdString(), "demo_lora");
      QVERIFY(state);
      stateFolder = QString::fromStdString(state->folder);
    }

    // Opened again: the interrupted run offers its last state.
    MainWindow window;
    window.show();
    QueuePanel* panel = window.queuePanel();
    QVERIFY(window.queueDock()->isVisible());
    QCOMPARE(statusColumn(panel), QStringList({"Interrupted", "Pending"}));
    panel->list()->setCurrentItem(panel->list()->topLevelItem(1));
    QVERIFY(!panel->resumeButton()->isEnabled());  // a pending run has nothing to resume
    panel->list()->setCurrentItem(panel->list()->topLevelItem(0));
    QVERIFY(panel->resumeButton()->isEnabled());
    QVERIFY2(panel->resumeButton()->toolTip().contains(stateFolder), qPrintable(panel->resumeButton()->toolTip()));
    panel->resumeButton()->click();
    QCOMPARE(statusColumn(panel), QStringList({"Pending", "Pending"}));
    QCOMPARE(QString::fromStdString(queueOnDisk(panel).entries[0].resume), stateFolder);

    TrainingTab* lora = window.tab(Tab::LoRA);
    QSignalSpy queueEnded(panel, &QueuePanel::queueEnded);
    QSignalSpy runFinished(lora->runPanel()->controller(), &RunController::finished);
    panel->startButton()->click();
    // The first run's log, read before the second run's start clears it.
    QVERIFY(runFinished.wait(300000));
    lora->runPanel()->logView()->flush();
    const QString firstLog = lora->runPanel()->logView()->text();
    QVERIFY2(firstLog.contains("resumed from " + stateFolder), qPrintable(firstLog.right(3000)));
    QVERIFY(!queueEnded.isEmpty() || queueEnded.wait(300000));
    QCOMPARE(statusColumn(panel), QStringList({"Done", "Done"}));
    QVERIFY(QFile::exists(work.filePath("demo-output/lora/demo_lora.safetensors")));
    QVERIFY(QFile::exists(work.filePath("demo-output/lora/after.safetensors")));
  }

  void anAppThatDiedMidRunLeavesItInterruptedWithItsStateOffered() {
    DemoFolder work;
    QVERIFY2(work.failure.isEmpty(), qPrintable(work.failure));
    {
      auto window = std::make_unique<MainWindow>();
      window->show();
      QueuePanel* panel = window->queuePanel();
      TrainingTab* lora = window->tab(Tab::LoRA);
      window->tabs()->setCurrentWidget(lora);
      loadDemo(lora, 12);
      test::setOption(lora->form(), "save_state", true);
      test::setOption(lora->form(), "save_every_n_steps", 1LL);
      QVERIFY(panel->addCurrentConfig());
      panel->startButton()->click();
      RunMonitor* monitor = lora->runPanel()->monitor();
      QTRY_VERIFY_WITH_TIMEOUT(monitor->lastStep() >= 2 || !lora->isRunning(), 300000);
      lora->runPanel()->pauseButton()->click();
      QTRY_VERIFY_WITH_TIMEOUT(monitor->isPaused() || !lora->isRunning(), 300000);
      QVERIFY(monitor->isPaused());
      QVERIFY(findLastSavedTrainState(work.filePath("demo-output/lora").toStdString(), "demo_lora"));
      // The window goes without closing (as when the app is killed): its runner is killed, and the
      // queue file is left as it was.
    }
    const RunQueue left = loadRunQueueFile(QDir(QueueStore::defaultFolder()).filePath("queue.toml").toStdString());
    QCOMPARE(left.entries.size(), std::size_t(1));
    QCOMPARE(left.entries[0].status, QueueStatus::Running);

    MainWindow window;
    window.show();
    QueuePanel* panel = window.queuePanel();
    QCOMPARE(statusColumn(panel), QStringList({"Interrupted"}));
    QCOMPARE(panel->list()->topLevelItem(0)->text(4), QString("The app ended during this run."));
    QCOMPARE(queueOnDisk(panel).entries[0].status, QueueStatus::Interrupted);  // saved so at once
    panel->list()->setCurrentItem(panel->list()->topLevelItem(0));
    QVERIFY(panel->resumeButton()->isEnabled());
    const auto state = findLastSavedTrainState(work.filePath("demo-output/lora").toStdString(), "demo_lora");
    QVERIFY(state);
    QVERIFY2(panel->resumeButton()->toolTip().contains(QString::fromStdString(state->folder)), qPrintable(panel->resumeButton()->toolTip()));
  }
};

QTEST_MAIN(QueueTest)
#include "queue_test.moc"

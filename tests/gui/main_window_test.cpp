// The window: one run per tab while the other tabs stay usable, and closing during a run asks
// first, then stops the run gracefully.
#include <QMessageBox>
#include <QPushButton>
#include <QTabWidget>
#include <QtTest>

#include "gui_test_support.h"
#include "main_window.h"
#include "run_controller.h"
#include "run_monitor.h"
#include "run_panel.h"
#include "training_tab.h"

using namespace sinter;
using namespace sinter::gui;

namespace {
void startEndlessRun(TrainingTab* tab) {
  tab->runPanel()->startProcess(QStringLiteral(SINTER_REPLAY_RUNNER),
                                {QStringLiteral(SINTER_GUI_TEST_DATA_DIR "/stoppable_run.events.jsonl"), "--until-term"},
                                QString());
}
}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void otherTabsStayUsableDuringARun() {
    MainWindow window;
    window.show();
    TrainingTab* lora = window.tab(Tab::LoRA);
    startEndlessRun(lora);
    QTRY_VERIFY_WITH_TIMEOUT(lora->runPanel()->monitor()->lastStep() > 0, 10000);
    QVERIFY(window.tabs()->tabText(0).contains("running"));
    TrainingTab* db = window.tab(Tab::DreamBooth);
    QVERIFY(db->isEnabled());
    QVERIFY(db->runPanel()->startButton()->isEnabled());
    QVERIFY(!lora->runPanel()->startButton()->isEnabled());
    test::setOption(db->form(), "output_name", std::string("edited while LoRA runs"));
    QVERIFY(db->document().isModified());
    lora->runPanel()->requestStop();
    QTRY_VERIFY_WITH_TIMEOUT(!lora->isRunning(), 10000);
    QCOMPARE(lora->runPanel()->monitor()->finalStatus(), QString("stopped"));
    db->newConfig();  // nothing left to ask about when the window goes
  }

  void closingDuringARunAsksFirst() {
    MainWindow window;
    window.show();
    TrainingTab* lora = window.tab(Tab::LoRA);
    startEndlessRun(lora);
    QTRY_VERIFY_WITH_TIMEOUT(lora->runPanel()->monitor()->lastStep() > 0, 10000);

    QString asked;
    test::whenModalAppears([&](QWidget* w) {
      auto* box = qobject_cast<QMessageBox*>(w);
      QVERIFY(box);
      asked = box->text();
      box->button(QMessageBox::Cancel)->click();
    });
    QVERIFY(!window.close());
    QVERIFY(asked.contains("in progress"));
    QVERIFY(lora->isRunning());

    test::whenModalAppears([](QWidget* w) { qobject_cast<QMessageBox*>(w)->button(QMessageBox::Yes)->click(); });
    window.close();  // asks the runs to stop; the window closes once they have saved
    QVERIFY(window.isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(!window.isVisible(), 10000);
    QVERIFY(!lora->isRunning());
    QCOMPARE(lora->runPanel()->monitor()->finalStatus(), QString("stopped"));
    QCOMPARE(lora->runPanel()->controller()->forceStopped(), false);  // it stopped when asked
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"

// The Dataset check window (issue 57): "Check dataset…" runs the real sinter-runner's
// --check_dataset on the tab's settings and shows its report, each finding with its file; a run's
// own dataset_check event (through a real process, the replay runner) fills the same panel.
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include "app_paths.h"
#include "core/events.h"
#include "dataset_check_panel.h"
#include "gui_test_support.h"
#include "log_view.h"
#include "run_controller.h"
#include "run_panel.h"
#include "training_tab.h"

using namespace sinter;
using namespace sinter::gui;

namespace {

// A PNG of one colour; two of the same size and colour are the same file, byte for byte.
void writePng(const QString& path, int width, int height, QColor colour) {
  QImage image(width, height, QImage::Format_RGB888);
  image.fill(colour);
  QVERIFY2(image.save(path, "PNG"), qPrintable(path));
}

void writeText(const QString& path, const QByteArray& text) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(text);
}

}  // namespace

class DatasetCheckPanelTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  // The button's check, end to end: the tab's settings written, the real runner started with
  // --check_dataset, its report in the window.
  void checkDatasetRunsTheRealRunner() {
    if (!QFileInfo(test::realRunner()).isExecutable()) QSKIP("sinter-runner is not built in this build tree");
    setRunnerPathPreference(test::realRunner());
    QTemporaryDir dir;
    const QString dog = dir.filePath("data/5_dog");
    QVERIFY(QDir().mkpath(dog));
    writePng(dog + "/red.png", 128, 128, Qt::red);
    writeText(dog + "/red.txt", "a red dog");
    writePng(dog + "/red_copy.png", 128, 128, Qt::red);
    writeText(dog + "/red_copy.txt", "a red dog");
    writePng(dog + "/blue.png", 128, 128, Qt::blue);  // no caption file
    writePng(dog + "/green.png", 32, 32, Qt::green);
    QVERIFY(QDir().mkpath(dog + "/green.txt"));  // a folder where its caption file would be
    writeText(dog + "/broken.png", "not a picture");

    TrainingTab tab(Tab::LoRA, nullptr, {});
    test::setOption(tab.form(), "train_data_dir", dir.filePath("data").toStdString());
    test::setOption(tab.form(), "caption_extension", std::string(".txt"));
    test::setOption(tab.form(), "resolution", std::string("128,128"));
    test::setOption(tab.form(), "enable_bucket", true);
    test::setOption(tab.form(), "min_bucket_reso", 64LL);
    test::setOption(tab.form(), "max_bucket_reso", 256LL);
    test::setOption(tab.form(), "bucket_reso_steps", 64LL);
    DatasetCheckPanel* panel = tab.datasetCheckPanel();
    QSignalSpy finished(panel, &DatasetCheckPanel::checkFinished);
    tab.checkDataset();
    QVERIFY(panel->window()->isVisible());
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.first().at(0).toInt(), 0);
    const QString report = panel->reportText();
    for (const QString& line : {QString("Images without a caption file (2)"), "  " + dog + "/blue.png: no .txt caption file",
                                dog + "/green.txt is a folder, not a file", QString("Files with the same content (1)"),
                                "  " + dog + "/red.png: same content as " + dog + "/red_copy.png",
                                QString("Smaller than the smallest bucket (1)"), "  " + dog + "/green.png: 32x32 is smaller",
                                QString("Cannot be read (1)"), "  " + dog + "/broken.png: not a PNG, JPEG, WebP or BMP image",
                                "  " + dog + ": 4 × 5 = 20", QString("Buckets (1)"), QString("  128 × 128: 4 image(s), 20 with repeats")})
      QVERIFY2(report.contains(line), qPrintable(line + "\nnot in\n" + report));
    QVERIFY2(panel->summaryText().contains("4 image(s) in use"), qPrintable(panel->summaryText()));
    QVERIFY(!panel->summaryText().contains("refuse"));
    // The runner's warnings are in the window's log too.
    QVERIFY2(panel->log()->text().contains("Warning: dataset check: image files with the same content"), qPrintable(panel->log()->text()));
  }

  // A run sends the report at its start: the same panel shows it, and the run's log points to it.
  void aRunsReportFillsThePanel() {
    QTemporaryDir dir;
    events::DatasetCheck check;
    check.images = 3;
    check.contents_compared = true;
    check.empty_captions = {{"/data/1_x/a.png", "its caption file /data/1_x/a.txt holds only blank lines"}};
    check.duplicates = {{"/data/1_x/b.png", "/data/1_x/c.png"}};
    check.buckets = {{1024, 1024, 3, 3}};
    check.folders = {{"/data/1_x", 3, 1, 3, 0, false}};
    const QString eventsFile = dir.filePath("run.events.jsonl");
    writeText(eventsFile, QByteArray::fromStdString(
                              events::toJsonLine(check) + "\n" +
                              events::toJsonLine(events::Start{"t", "cpu", "sdxl", "lora", 1, 1, {}, 3, 0}) + "\n" +
                              events::toJsonLine(events::Done{"completed", 1, 0.1}) + "\n"));
    setRunnerPathPreference(QStringLiteral(SINTER_REPLAY_RUNNER));
    qputenv("SINTER_REPLAY_EVENTS", eventsFile.toUtf8());
    TrainingTab tab(Tab::LoRA, nullptr, {});
    test::setOption(tab.form(), "output_dir", dir.filePath("out").toStdString());
    QSignalSpy finished(tab.runPanel()->controller(), &RunController::finished);
    QVERIFY(tab.startRun());
    QVERIFY(finished.wait(15000));
    tab.runPanel()->logView()->flush();
    DatasetCheckPanel* panel = tab.datasetCheckPanel();
    const QString report = panel->reportText();
    QVERIFY2(report.contains("Empty captions (1)\n  /data/1_x/a.png: its caption file /data/1_x/a.txt holds only blank lines"), qPrintable(report));
    QVERIFY2(report.contains("  /data/1_x/b.png: same content as /data/1_x/c.png"), qPrintable(report));
    QVERIFY2(report.contains("  /data/1_x: 3 × 1 = 3"), qPrintable(report));
    QVERIFY2(panel->summaryText().contains("Only the images' headers were read"), qPrintable(panel->summaryText()));
    const QString log = tab.runPanel()->logView()->text();
    QVERIFY2(log.contains("Dataset check: 2 finding(s)"), qPrintable(log));
  }

  // A report read back from the runner's JSON: every list survives, an empty report says so.
  void theEventRoundTripsAndAnEmptyReportSaysSo() {
    events::DatasetCheck check;
    check.images = 2;
    check.contents_compared = true;
    check.pixels_decoded = true;
    check.refusals = {"caption file is empty: /d/a.txt"};
    check.unreadable = {{"/d/b.txt", "caption file is not UTF-8"}};
    const auto parsed = events::parseJsonLine(events::toJsonLine(check));
    QVERIFY(parsed && std::holds_alternative<events::DatasetCheck>(*parsed));
    DatasetCheckPanel panel;
    panel.showReport(std::get<events::DatasetCheck>(*parsed));
    QVERIFY2(panel.summaryText().startsWith("A run would refuse this dataset."), qPrintable(panel.summaryText()));
    QVERIFY(panel.reportText().contains("Why a run would refuse it (1)\n  caption file is empty: /d/a.txt"));
    QVERIFY(panel.reportText().contains("Cannot be read (1)\n  /d/b.txt: caption file is not UTF-8"));
    panel.showReport(events::DatasetCheck{});
    QVERIFY2(panel.summaryText().startsWith("No problems found in 0 image(s)."), qPrintable(panel.summaryText()));
  }
};

QTEST_MAIN(DatasetCheckPanelTest)
#include "dataset_check_panel_test.moc"

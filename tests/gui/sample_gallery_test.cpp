// The sample gallery beside the loss chart, fed by `sample` events replayed through a real process
// (gui_replay_runner) as the runner's arrive: thumbnails newest first with their step and prompt,
// each run kept apart, a click opening the image large, a missing file shown as such.
#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QListWidget>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextStream>
#include <QtTest>

#include "gui_test_support.h"
#include "run_controller.h"
#include "run_panel.h"
#include "sample_gallery.h"
#include "sample_viewer.h"

using namespace sinter;
using namespace sinter::gui;

namespace {
const QString kReplay = QStringLiteral(SINTER_REPLAY_RUNNER);

// A solid PNG of `color` at `path`.
void writePng(const QString& path, QColor color, QSize size = QSize(64, 96)) {
  QImage image(size, QImage::Format_RGB32);
  image.fill(color);
  QVERIFY(image.save(path, "PNG"));
}

QString sampleLine(const QString& path, const QString& prompt, int step, int index, int epoch = 0) {
  return QStringLiteral(R"({"type":"sample","path":"%1","prompt":"%2","step":%3,"epoch":%4,"index":%5,"seconds":0.5})")
      .arg(path, prompt)
      .arg(step)
      .arg(epoch)
      .arg(index);
}

// Replays `lines` (a start event first) through the replay runner and waits for it to end.
bool replay(RunPanel& panel, const QString& file, const QStringList& lines) {
  QFile out(file);
  if (!out.open(QIODevice::WriteOnly | QIODevice::Text)) return false;
  QTextStream s(&out);
  s << R"({"type":"start","version":"0.1.0","device":"cpu","model_family":"sdxl","training_mode":"lora","total_steps":4,"epochs":1})" << "\n";
  for (const QString& l : lines) s << l << "\n";
  s << R"({"type":"done","status":"completed","steps":4,"seconds":1.0})" << "\n";
  out.close();
  QSignalSpy finished(panel.controller(), &RunController::finished);
  panel.startProcess(kReplay, {file}, QString());
  return finished.wait(15000);
}
}  // namespace

class SampleGalleryTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void samplesOfEachRunAppearAndOpen() {
    QTemporaryDir dir;
    const QString red = dir.filePath("t_000000_00_20261125120000_5.png"), blue = dir.filePath("t_000002_01_20261125120001.png");
    const QString missing = dir.filePath("gone.png"), green = dir.filePath("u_e000001_00_20261125130000_1.png");
    writePng(red, Qt::red);
    writePng(blue, Qt::blue, QSize(256, 128));
    writePng(green, Qt::green);
    RunPanel panel;
    SampleGallery* gallery = panel.sampleGallery();
    QVERIFY(gallery);
    QVERIFY(replay(panel, dir.filePath("run1.jsonl"),
                   {sampleLine(red, "a red square", 0, 0), sampleLine(blue, "a blue circle", 2, 1), sampleLine(missing, "lost", 4, 0)}));

    // Newest first, each captioned with its step and described by its prompt.
    QListWidget* list = gallery->thumbnails();
    QCOMPARE(list->count(), 3);
    QCOMPARE(list->item(0)->text(), QString("step 4"));
    QCOMPARE(list->item(2)->text(), QString("step 0"));
    QVERIFY(list->item(1)->toolTip().contains("a blue circle"));
    QVERIFY(list->item(1)->toolTip().contains(blue));
    QVERIFY(!list->item(1)->icon().isNull());
    // Thumbnails are read at thumbnail size, keeping the aspect ratio.
    const QSize blueSize = list->item(1)->icon().availableSizes().value(0);
    QCOMPARE(blueSize, QSize(96, 48));
    // A file that is gone is said so, not shown as an empty tile.
    QVERIFY2(list->item(0)->toolTip().contains("cannot be read"), qPrintable(list->item(0)->toolTip()));

    // A click opens the image large with its prompt.
    gallery->openSample(1);
    SampleViewer* viewer = gallery->lastViewer();
    QVERIFY(viewer);
    QVERIFY(viewer->imageLoaded());
    QVERIFY(viewer->windowTitle().contains("2"));
    QList<QLabel*> labels = viewer->findChildren<QLabel*>();
    QVERIFY(std::any_of(labels.begin(), labels.end(), [](QLabel* l) { return l->text() == "a blue circle"; }));
    gallery->openSample(0);
    QVERIFY(!gallery->lastViewer()->imageLoaded());
    QVERIFY(gallery->lastViewer()->imageLabel()->text().contains("gone.png"));

    // A second run starts a group of its own; the first run's samples stay reachable.
    QVERIFY(replay(panel, dir.filePath("run2.jsonl"), {sampleLine(green, "a green shape", 10, 0, 1)}));
    QCOMPARE(gallery->runChooser()->count(), 2);
    QCOMPARE(gallery->runChooser()->currentIndex(), 1);
    QCOMPARE(list->count(), 1);
    QCOMPARE(list->item(0)->text(), QString("epoch 1, step 10"));
    gallery->runChooser()->setCurrentIndex(0);
    QCOMPARE(list->count(), 3);
    QCOMPARE(list->item(2)->text(), QString("step 0"));
    gallery->openSample(2);
    QVERIFY(gallery->lastViewer()->windowTitle().contains("0"));
    QCOMPARE(gallery->history().runs().size(), 2);
    QCOMPARE(gallery->history().runs()[1].samples.size(), 1);
  }

  void emptyGallerySaysWhereSamplesComeFrom() {
    SampleGallery gallery;
    QCOMPARE(gallery.thumbnails()->count(), 0);
    const QList<QLabel*> labels = gallery.findChildren<QLabel*>();
    QVERIFY(std::any_of(labels.begin(), labels.end(), [](QLabel* l) { return l->text().contains("sample prompts"); }));
  }
};

QTEST_MAIN(SampleGalleryTest)
#include "sample_gallery_test.moc"

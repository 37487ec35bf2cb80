// The Checkpoint grid window (issue 57) in the real MainWindow with the real sinter-runner: the tiny
// demo trains and saves twice, the sample gallery's "Checkpoint grid…" lists both files, "Make grid"
// runs `--sample_grid` and the window shows the picture with one cell per (file, prompt) under the
// headers its PNG's layout names; a file cleared in the list is no row. A grid whose layout does not
// match its picture is refused rather than labelled wrong. A LoRA run's list leaves out the
// embeddings a pivotal tuning run writes apart.
#include <QDir>
#include <QImage>
#include <QListWidget>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "app_paths.h"
#include "checkpoint_grid_layout.h"
#include "checkpoint_grid_panel.h"
#include "checkpoint_grid_view.h"
#include "checkpoint_grid_window.h"
#include "gui_test_support.h"
#include "log_view.h"
#include "main_window.h"
#include "run_controller.h"
#include "run_panel.h"
#include "demo_folder.h"
#include "sample_gallery.h"
#include "training_tab.h"

using namespace sinter;
using namespace sinter::gui;

namespace {

constexpr int kSide = 64;  // the prompts' size, so each cell's

// The demo's folder (demo_folder.h) with two quick prompts of 64x64 px beside it; empty, or what failed.
QString writeQuickPrompts(const test::DemoFolder& work) {
  QFile prompts(work.filePath(QStringLiteral("prompts.txt")));
  if (!prompts.open(QIODevice::WriteOnly) ||
      prompts.write("a red circle on white --w 64 --h 64 --d 1 --s 4\na blue square on yellow --n red --w 64 --h 64 --d 2 --s 4 --l 5\n") < 0)
    return QStringLiteral("cannot write the sample prompts");
  return {};
}

}  // namespace

class CheckpointGridTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    test::isolateSettings();
    if (!QFileInfo(test::realRunner()).isExecutable()) QSKIP("sinter-runner is not built in this build tree");
    setRunnerPathPreference(test::realRunner());
  }

  void gridOfTheSavedFilesIsShownCellByCell() {
    test::DemoFolder work;
    QVERIFY2(work.failure.isEmpty(), qPrintable(work.failure));
    const QString prompts = writeQuickPrompts(work);
    QVERIFY2(prompts.isEmpty(), qPrintable(prompts));
    MainWindow window;
    TrainingTab* tab = window.tab(Tab::LoRA);
    QString error;
    QVERIFY2(tab->loadFile(QStringLiteral(SINTER_PRESETS_DIR "/demo_sdxl_lora_tiny.toml"), &error), qPrintable(error));
    // The demo cut to 4 steps at 64x64, saving at step 2 and at its end; the quick prompts.
    test::setOption(tab->form(), "max_train_steps", 4LL);
    test::setOption(tab->form(), "save_every_n_steps", 2LL);
    test::setOption(tab->form(), "resolution", std::string("64,64"));
    test::setOption(tab->form(), "sample_prompts", work.filePath(QStringLiteral("prompts.txt")).toStdString());
    QSignalSpy trained(tab->runPanel()->controller(), &RunController::finished);
    QVERIFY(tab->startRun());
    QVERIFY(trained.wait(600000));
    QCOMPARE(trained.first().at(0).toInt(), 0);

    tab->runPanel()->sampleGallery()->checkpointGridButton()->click();
    CheckpointGridWindow* gridWindow = tab->checkpointGridWindow();
    QVERIFY(gridWindow->isVisible());
    CheckpointGridPanel* panel = gridWindow->panel();
    QListWidget* files = panel->fileList();
    QCOMPARE(files->count(), 3);  // the base model, then the saves, oldest first
    QCOMPARE(files->item(0)->text(), QString("Base model (step 0)"));
    QVERIFY(!(files->item(0)->flags() & Qt::ItemIsUserCheckable));
    QCOMPARE(files->item(1)->text(), QString("demo_lora-step00000002.safetensors"));
    QCOMPARE(files->item(2)->text(), QString("demo_lora.safetensors"));
    QCOMPARE(panel->checkedFiles().size(), 2);

    QSignalSpy made(panel, &CheckpointGridPanel::gridFinished);
    panel->makeButton()->click();
    QVERIFY(made.wait(300000));
    QVERIFY2(made.first().at(0).toInt() == 0, qPrintable(panel->summaryText() + "\n" + panel->log()->text().right(3000)));
    CheckpointGridView* view = panel->view();
    QVERIFY2(view->hasGrid(), qPrintable(panel->summaryText()));
    // One cell per (file, prompt): three rows of two.
    QCOMPARE(view->grid().image.size(), QSize(2 * kSide, 3 * kSide));
    QCOMPARE(view->rowLabels().size(), 3);
    QCOMPARE(view->rowLabels().at(0), QString("Base model (step 0)"));
    QCOMPARE(view->rowLabels().at(1), QString("demo_lora-step00000002.safetensors\nstep 2, epoch 1"));
    QVERIFY2(view->rowLabels().at(2).startsWith("demo_lora.safetensors\nstep 4"), qPrintable(view->rowLabels().at(2)));
    QCOMPARE(view->columnLabels(), QStringList({"a red circle on white", "a blue square on yellow"}));
    QCOMPARE(view->cellRect(2, 1).size(), QSize(kSide, kSide));
    QCOMPARE(view->cellRect(2, 1).bottomRight(),
             QPoint(CheckpointGridView::kRowHeaderWidth + 2 * kSide - 1, CheckpointGridView::kColumnHeaderHeight + 3 * kSide - 1));
    // The picture is real samples: the trained row is another picture than the base model's.
    const QImage grid = view->grid().image.convertToFormat(QImage::Format_RGB888);
    QVERIFY(grid.copy(0, 0, kSide, kSide) != grid.copy(0, 2 * kSide, kSide, kSide));
    const QStringList written = QDir(work.filePath("demo-output/lora/sample")).entryList({QStringLiteral("demo_lora_grid_*.png")});
    QCOMPARE(written.size(), 1);

    // A file cleared in the list is no row.
    files->item(1)->setCheckState(Qt::Unchecked);
    made.clear();
    panel->makeButton()->click();
    QVERIFY(made.wait(300000));
    QCOMPARE(made.first().at(0).toInt(), 0);
    QCOMPARE(view->grid().image.size(), QSize(2 * kSide, 2 * kSide));
    QCOMPARE(view->rowLabels().size(), 2);
    QVERIFY(view->rowLabels().at(1).startsWith("demo_lora.safetensors"));
    gridWindow->close();
  }

  // A pivotal tuning run writes each embedding apart beside its LoRA file (<lora>_<token>.safetensors),
  // which the runner refuses as a LoRA run's row: the list leaves them out (each LoRA file's row has
  // the embeddings it bundles) and the summary says so. A textual inversion run's list still has
  // every file (its embedding files are its rows).
  void loraRunsListLeavesOutTheEmbeddingsWrittenApart() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::vector<std::string> lora = {"bundle_emb.zz.clip_g", "bundle_emb.zz.clip_l", "lora_unet_a.alpha", "lora_unet_a.lora_down.weight",
                                           "lora_unet_a.lora_up.weight"};
    const std::vector<std::string> embedding = {"clip_g", "clip_l"};
    for (const char* name : {"piv-step00000002.safetensors", "piv.safetensors"}) QVERIFY(test::writeTinySafetensors(dir.filePath(name), lora));
    for (const char* name : {"piv-step00000002_zz.safetensors", "piv_zz.safetensors"})
      QVERIFY(test::writeTinySafetensors(dir.filePath(name), embedding));
    const auto listed = [](const CheckpointGridPanel& panel) {
      QStringList names;
      for (int i = 1; i < panel.fileList()->count(); ++i) names << panel.fileList()->item(i)->text();  // after the base model's row
      names.sort();
      return names;
    };

    CheckpointGridPanel panel;
    panel.setOutputFolder(dir.path(), Tab::LoRA);
    QCOMPARE(listed(panel), QStringList({"piv-step00000002.safetensors", "piv.safetensors"}));
    QCOMPARE(panel.checkedFiles().size(), 2);
    QVERIFY2(panel.summaryText().contains("2 file(s) without LoRA modules"), qPrintable(panel.summaryText()));

    panel.setOutputFolder(dir.path(), Tab::TextualInversion);
    QCOMPARE(listed(panel).size(), 4);
    QVERIFY2(!panel.summaryText().contains("without LoRA modules"), qPrintable(panel.summaryText()));
  }

  void layoutThatDoesNotMatchItsPictureIsRefused() {
    QTemporaryDir dir;
    const QString layout = QStringLiteral(
        R"({"rows":[{"base":true,"file":"","path":"","step":0,"epoch":null}],"columns":[{"prompt":"a"},{"prompt":"b"}],)"
        R"("cell_width":32,"cell_height":32,"model":"m"})");
    QImage image(64, 32, QImage::Format_RGB888);
    image.fill(Qt::gray);
    image.setText(QString::fromLatin1(kCheckpointGridLayoutKey), layout);
    QVERIFY(image.save(dir.filePath("fits.png")));
    QString error;
    std::optional<CheckpointGridImage> read = readCheckpointGrid(dir.filePath("fits.png"), &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->layout.columns.size(), 2);

    QImage taller(64, 64, QImage::Format_RGB888);  // two rows of pixels for a layout of one
    taller.fill(Qt::gray);
    taller.setText(QString::fromLatin1(kCheckpointGridLayoutKey), layout);
    QVERIFY(taller.save(dir.filePath("taller.png")));
    QVERIFY(!readCheckpointGrid(dir.filePath("taller.png"), &error));
    QVERIFY2(error.contains("does not match the picture"), qPrintable(error));

    QImage plain(64, 32, QImage::Format_RGB888);
    plain.fill(Qt::gray);
    QVERIFY(plain.save(dir.filePath("plain.png")));
    QVERIFY(!readCheckpointGrid(dir.filePath("plain.png"), &error));
    QVERIFY2(error.contains("no layout"), qPrintable(error));

    CheckpointGridPanel panel;
    QVERIFY(!panel.showGrid(dir.filePath("taller.png")));
    QVERIFY(!panel.view()->hasGrid());
    QVERIFY(panel.summaryText().contains("cannot be shown"));
  }
};

QTEST_MAIN(CheckpointGridTest)
#include "checkpoint_grid_test.moc"

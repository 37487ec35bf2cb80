// The Textual Inversion tab (issue 58): the registry's embedding options and the common ones, no
// LoRA or full-weight options, only the families sd-scripts trains embeddings for (SD 1.x/2.x and
// SDXL), its configs round-trip; and, filled in for a tiny SD 1.5 checkpoint, Start runs the real
// runner, which writes the embedding file and samples whose prompts hold the token.
#include <algorithm>

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QListWidget>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "app_paths.h"
#include "core/registry.h"
#include "core/toml_config.h"
#include "core/validation.h"
#include "gui_test_support.h"
#include "log_view.h"
#include "main_window.h"
#include "option_editor.h"
#include "option_form.h"
#include "option_group.h"
#include "run_controller.h"
#include "run_panel.h"
#include "sample_gallery.h"
#include "training_tab.h"

using namespace sinter;
using namespace sinter::gui;

namespace {
QStringList familyChoices(OptionForm& form) {
  QStringList out;
  auto* combo = form.editor("model_family")->findChild<QComboBox*>();
  for (int i = 0; combo && i < combo->count(); ++i) out << combo->itemData(i).toString();
  return out;
}

QString runInit(const QStringList& args) {
  QProcess init;
  init.start(test::realRunner(), args);
  if (!init.waitForFinished(120000) || init.exitCode() != 0) return "sinter-runner " + args.join(' ') + ": " + init.readAllStandardError().left(300);
  return {};
}
}  // namespace

class TextualInversionTabTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void theWindowHasTheTabBeforeTools() {
    MainWindow window;
    TrainingTab* tab = window.tab(Tab::TextualInversion);
    QVERIFY(tab);
    QCOMPARE(window.tabs()->indexOf(tab), 3);
    QCOMPARE(window.tabs()->tabText(3), QStringLiteral("Textual Inversion"));
    QCOMPARE(tab->currentConfig().getString("training_type"), std::string("textual_inversion"));
    // The runner's --sample_grid puts the run's embedding files on a grid: the button is here too.
    QVERIFY(!tab->runPanel()->sampleGallery()->checkpointGridButton()->isHidden());
    QVERIFY(!window.tab(Tab::LoRA)->runPanel()->sampleGallery()->checkpointGridButton()->isHidden());
  }

  void showsTheEmbeddingOptionsAndOnlyTheFamiliesItTrains() {
    OptionForm form(Tab::TextualInversion);
    for (const char* key : {"token_string", "init_word", "num_vectors_per_token", "weights", "use_object_template", "use_style_template",
                            "train_data_dir", "learning_rate", "max_train_steps", "save_every_n_steps", "sample_prompts"})
      QVERIFY2(form.editor(key), key);
    for (const char* key : {"network_dim", "network_module", "train_text_encoder"}) QVERIFY2(!form.editor(key), key);
    QCOMPARE(familyChoices(form), (QStringList{"auto", "sdxl", "sd15", "sd2"}));
    // Its Network section is the embedding's.
    const QList<OptionGroup*> groups = form.findChildren<OptionGroup*>();
    QVERIFY(std::any_of(groups.begin(), groups.end(), [&](OptionGroup* g) { return g->title() == "Embedding" && g->isAncestorOf(form.editor("token_string")); }));
    // The other tabs still offer every family.
    OptionForm lora(Tab::LoRA);
    QCOMPARE(familyChoices(lora).size(), 6);
  }

  void aFamilyItDoesNotTrainIsRefusedBeforeTheRun() {
    const Config flux = parseConfigToml("training_type = \"textual_inversion\"\nmodel_family = \"flux\"\n", "ti.toml").config;
    const std::vector<Diagnostic> diags = validateConfig(flux);
    QVERIFY(hasErrors(diags));
    QVERIFY2(formatAll(diags).find("flux has no textual inversion") != std::string::npos, formatAll(diags).c_str());
  }

  void savedConfigRoundTrips() {
    QTemporaryDir dir;
    TrainingTab tab(Tab::TextualInversion, nullptr, {});
    test::setOption(tab.form(), "model_family", std::string("sdxl"));
    test::setOption(tab.form(), "token_string", std::string("zz"));
    test::setOption(tab.form(), "init_word", std::string("red circle"));
    test::setOption(tab.form(), "num_vectors_per_token", 3LL);
    test::setOption(tab.form(), "use_style_template", true);
    QString error;
    const QString path = dir.filePath("ti.toml");
    QVERIFY2(tab.saveFile(path, &error), qPrintable(error));
    TrainingTab reopened(Tab::TextualInversion, nullptr, {});
    QVERIFY2(reopened.loadFile(path, &error), qPrintable(error));
    QVERIFY(reopened.currentConfig().sameEffectiveValues(tab.currentConfig()));
    QCOMPARE(reopened.currentConfig().getInt("num_vectors_per_token"), 3LL);
    QCOMPARE(reopened.family(), std::optional<Family>(Family::SDXL));
  }

  // kohya_ss's Textual Inversion tab's JSON lands in this tab.
  void kohyaImportOpensInTheTab() {
    MainWindow window;
    QString text;
    test::whenModalAppears([&](QWidget* w) {
      auto* box = qobject_cast<QMessageBox*>(w);
      QVERIFY(box);
      text = box->text();
      box->accept();
    });
    QVERIFY(window.importKohyaFile(QStringLiteral(SINTER_GUI_TEST_DATA_DIR "/../../data/kohya/sd15_textual_inversion_gui.json")));
    TrainingTab* tab = window.tab(Tab::TextualInversion);
    QCOMPARE(window.currentTab(), tab);
    QVERIFY2(text.contains("Textual Inversion"), qPrintable(text));
    QCOMPARE(asString(tab->form()->editor("token_string")->value()), std::string("mychar"));
    QCOMPARE(asInt(tab->form()->editor("num_vectors_per_token")->value()), 4LL);
    QCOMPARE(tab->form()->editor("use_object_template")->value(), Value{true});
    QCOMPARE(tab->family(), std::optional<Family>(Family::SD15));
  }

  void startTrainsAnEmbeddingWithTheRealRunner() {
    if (!QFileInfo(test::realRunner()).isExecutable()) QSKIP("sinter-runner is not built in this build tree");
    setRunnerPathPreference(test::realRunner());
    QTemporaryDir dir;
    for (const QStringList& args : QList<QStringList>{
             {"--init_checkpoint", dir.filePath("tiny_sd15.safetensors"), "--model_family", "sd15", "--model_size", "tiny", "--seed", "1"},
             {"--init_dataset", dir.filePath("images"), "--seed", "1"},
             {"--init_tokenizer", dir.filePath("tokenizer")}}) {
      const QString failure = runInit(args);
      QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }
    QFile prompts(dir.filePath("prompts.txt"));
    QVERIFY(prompts.open(QIODevice::WriteOnly));
    prompts.write("a photo of zz --w 64 --h 64 --d 1 --s 2\n");
    prompts.close();

    TrainingTab tab(Tab::TextualInversion, nullptr, {});
    test::setOption(tab.form(), "pretrained_model_name_or_path", dir.filePath("tiny_sd15.safetensors").toStdString());
    QCOMPARE(tab.family(), std::optional<Family>(Family::SD15));  // detected from the checkpoint
    test::setOption(tab.form(), "clip_tokenizer", dir.filePath("tokenizer").toStdString());
    test::setOption(tab.form(), "train_data_dir", dir.filePath("images").toStdString());
    test::setOption(tab.form(), "output_dir", dir.filePath("out").toStdString());
    test::setOption(tab.form(), "resolution", std::string("64,64"));
    test::setOption(tab.form(), "max_train_steps", 2LL);
    test::setOption(tab.form(), "max_data_loader_n_workers", 0LL);
    test::setOption(tab.form(), "learning_rate", 0.01);
    test::setOption(tab.form(), "token_string", std::string("zz"));
    test::setOption(tab.form(), "init_word", std::string("red"));
    test::setOption(tab.form(), "num_vectors_per_token", 2LL);
    test::setOption(tab.form(), "sample_prompts", dir.filePath("prompts.txt").toStdString());
    test::setOption(tab.form(), "sample_every_n_steps", 2LL);

    QSignalSpy finished(tab.runPanel()->controller(), &RunController::finished);
    QSignalSpy errors(&tab, &TrainingTab::errorReported);
    QVERIFY2(tab.startRun(), errors.isEmpty() ? "start refused" : qPrintable(errors.first().at(1).toString()));
    QVERIFY(finished.wait(600000));
    tab.runPanel()->logView()->flush();
    QVERIFY2(finished.first().at(0).toInt() == 0, qPrintable(tab.runPanel()->logView()->text().right(3000)));
    // output_name unset: the token names the file, as train_textual_inversion.py names it.
    QVERIFY2(QFileInfo::exists(dir.filePath("out/zz.safetensors")), qPrintable(QDir(dir.filePath("out")).entryList().join(", ")));
    // The gallery shows the sample, its prompt holding the token's two vectors.
    QListWidget* thumbnails = tab.runPanel()->sampleGallery()->thumbnails();
    QCOMPARE(thumbnails->count(), 1);
    QVERIFY2(thumbnails->item(0)->toolTip().contains("a photo of zz zz1"), qPrintable(thumbnails->item(0)->toolTip()));
  }
};

QTEST_MAIN(TextualInversionTabTest)
#include "textual_inversion_tab_test.moc"

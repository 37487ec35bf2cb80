// Configs: saved files follow the seed's rules, bad files give an error naming file and line and
// keep the form, --open routes a file to its tab, the title shows the file and a modified mark,
// the unsaved-changes prompt, recent files, and the kohya_ss import report.
#include <QMessageBox>
#include <QPushButton>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QSpinBox>
#include <QtTest>

#include "core/registry.h"
#include "core/toml_config.h"
#include "gui_test_support.h"
#include "main_window.h"
#include "recent_files.h"
#include "run_panel.h"
#include "training_tab.h"

using namespace sinter;
using namespace sinter::gui;

namespace {
QString readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}
const QString kData = QStringLiteral(SINTER_GUI_TEST_DATA_DIR);
}  // namespace

class ConfigFilesTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void savedFileFollowsTheRules_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<bool>("compileKeys");
    QTest::newRow("sdxl") << "sdxl" << true;
    QTest::newRow("flux") << "flux" << true;
    QTest::newRow("sd15") << "sd15" << false;
    QTest::newRow("sd2") << "sd2" << false;
  }
  void savedFileFollowsTheRules() {
    QFETCH(QString, family);
    QFETCH(bool, compileKeys);
    QTemporaryDir dir;
    TrainingTab tab(Tab::LoRA, nullptr, {});
    OptionForm* form = tab.form();
    test::setOption(form, "model_family", family.toStdString());
    test::setOption(form, "compile", true);
    test::setOption(form, "compile_backend", std::string("inductor"));
    test::setOption(form, "compile_dynamic", std::string("auto"));
    test::setOption(form, "compile_cache_size_limit", 0LL);
    test::setOption(form, "wandb_api_key", std::string("secret-key-123"));
    test::setOption(form, "guidance_scale", 0.0);
    const QString path = dir.filePath("out.toml");
    QString error;
    QVERIFY2(tab.saveFile(path, &error), qPrintable(error));
    const QString text = readAll(path);
    QCOMPARE(text.contains("compile = true"), compileKeys);
    QCOMPARE(text.contains("compile_backend = \"inductor\""), compileKeys);
    QVERIFY(!text.contains("compile_dynamic"));           // auto is unset: never written
    QVERIFY(!text.contains("compile_cache_size_limit"));  // 0 = default: never written
    QVERIFY(!text.contains("secret-key-123"));            // secrets never written
    QVERIFY(!text.contains("wandb_api_key"));
    if (family == "flux") QVERIFY(text.contains("guidance_scale = 0.0"));  // a concrete 0.0 is kept
    QVERIFY(text.contains("[model]"));                    // grouped in sections
    // Saved by the app = written by core: load then save gives the same bytes.
    const LoadResult loaded = loadConfigFile(path.toStdString());
    QCOMPARE(QString::fromStdString(writeConfigToml(loaded.config, Tab::LoRA, familyFromString(family.toStdString()))), text);
    QVERIFY(!tab.document().isModified());
  }

  void badFileGivesAnErrorAndKeepsTheForm() {
    TrainingTab tab(Tab::LoRA, nullptr, {});
    test::setOption(tab.form(), "learning_rate", 0.0003);
    test::setOption(tab.form(), "output_name", std::string("kept"));
    const Config before = tab.currentConfig();
    QString error;
    QVERIFY(!tab.loadFile(kData + "/bad_unknown_key.toml", &error));
    QVERIFY2(error.contains("bad_unknown_key.toml:3"), qPrintable(error));  // file and line
    QVERIFY2(error.contains("learning_rate"), qPrintable(error));           // did you mean
    QVERIFY(tab.currentConfig().sameEffectiveValues(before));
    QCOMPARE(asString(tab.form()->editor("output_name")->value()), std::string("kept"));
  }

  void mainWindowShowsTheErrorAndKeepsTheForm() {
    MainWindow window;
    TrainingTab* lora = window.tab(Tab::LoRA);
    test::setOption(lora->form(), "output_name", std::string("kept"));
    QString shown;
    test::whenModalAppears([&](QWidget* w) {
      if (auto* box = qobject_cast<QMessageBox*>(w)) shown = box->text();
      static_cast<QDialog*>(w)->accept();
    });
    QVERIFY(!window.openFile(kData + "/bad_unknown_key.toml"));
    QVERIFY2(shown.contains("bad_unknown_key.toml:3"), qPrintable(shown));
    QCOMPARE(asString(lora->form()->editor("output_name")->value()), std::string("kept"));
  }

  void openRoutesToTheTabAndTitleShowsTheFile() {
    QTemporaryDir dir;
    const QString path = dir.filePath("db.toml");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("[model]\ntraining_type = \"dreambooth\"\nmodel_family = \"sdxl\"\noutput_name = \"opened\"\n"
            "[optimizer]\nlearning_rate = 2e-6\n");
    f.close();
    MainWindow window;
    QVERIFY(window.openFile(path));
    TrainingTab* db = window.tab(Tab::DreamBooth);
    QCOMPARE(window.currentTab(), db);
    QCOMPARE(asString(db->form()->editor("output_name")->value()), std::string("opened"));
    QCOMPARE(asDouble(db->form()->editor("learning_rate")->value()), 2e-6);
    // Absent keys take defaults.
    QCOMPARE(db->currentConfig().getInt("train_batch_size"), findOption("train_batch_size") ? asInt(findOption("train_batch_size")->defaultValue) : 1);
    QVERIFY(window.windowTitle().contains("db.toml"));
    QVERIFY(!window.isWindowModified());
    test::setOption(db->form(), "output_name", std::string("edited"));
    QVERIFY(window.isWindowModified());
    QVERIFY(RecentFiles::list().contains(QFileInfo(path).absoluteFilePath()));

    // Opening another file into the modified tab asks first; Cancel keeps everything.
    test::whenModalAppears([](QWidget* w) {
      auto* box = qobject_cast<QMessageBox*>(w);
      QVERIFY(box);
      box->button(QMessageBox::Cancel)->click();
    });
    QVERIFY(!window.openFile(path));
    QCOMPARE(asString(db->form()->editor("output_name")->value()), std::string("edited"));
    // Discard loads the file.
    test::whenModalAppears([](QWidget* w) { qobject_cast<QMessageBox*>(w)->button(QMessageBox::Discard)->click(); });
    QVERIFY(window.openFile(path));
    QCOMPARE(asString(db->form()->editor("output_name")->value()), std::string("opened"));
    QVERIFY(!window.isWindowModified());
  }

  void kohyaImportReportsWhatCouldNotBeMapped() {
    MainWindow window;
    QString details;
    test::whenModalAppears([&](QWidget* w) {
      auto* box = qobject_cast<QMessageBox*>(w);
      QVERIFY(box);
      details = box->text() + "\n" + box->informativeText() + "\n" + box->detailedText();
      box->accept();
    });
    QVERIFY(window.importKohyaFile(kData + "/kohya_lora.json"));
    TrainingTab* lora = window.tab(Tab::LoRA);
    QCOMPARE(window.currentTab(), lora);
    QCOMPARE(asString(lora->form()->editor("optimizer_type")->value()), std::string("AdamW8bit"));
    QCOMPARE(asString(lora->form()->editor("resolution")->value()), std::string("1024,1024"));
    QCOMPARE(asInt(lora->form()->editor("network_dim")->value()), 16LL);
    QVERIFY2(details.contains("some_kohya_gui_only_setting"), qPrintable(details));
    // accelerate's num_processes is the GPUs setting (the runner's --nproc_per_node), not a config key.
    QCOMPARE(lora->runPanel()->gpuCountBox()->value(), 2);
    QVERIFY2(details.contains("num_processes 2 -> GPUs 2"), qPrintable(details));
    lora->runPanel()->gpuCountBox()->setValue(1);
    QVERIFY(lora->document().isModified());
    QVERIFY(lora->document().isUntitled());
  }

  // What changes training is the first thing the report shows: a warning whose message lists it,
  // and the first group of the details, before what was carried and what was at kohya_ss's defaults.
  void kohyaImportShowsWhatIsNotCarriedFirst() {
    MainWindow window;
    QMessageBox::Icon icon = QMessageBox::NoIcon;
    QString informative, detailed;
    test::whenModalAppears([&](QWidget* w) {
      auto* box = qobject_cast<QMessageBox*>(w);
      QVERIFY(box);
      icon = box->icon();
      informative = box->informativeText();
      detailed = box->detailedText();
      box->accept();
    });
    QVERIFY(window.importKohyaFile(kData + "/kohya_lora.json"));
    QCOMPARE(icon, QMessageBox::Warning);
    QVERIFY2(informative.contains("some_kohya_gui_only_setting"), qPrintable(informative));
    QVERIFY2(!informative.contains("optimizer_type"), qPrintable(informative));  // carried: in the details only
    const int notCarried = detailed.indexOf(QStringLiteral("Not carried over: this changes training (1)"));
    const int carried = detailed.indexOf(QStringLiteral("Carried over ("));
    const int defaults = detailed.indexOf(QStringLiteral("At kohya_ss's defaults: nothing lost ("));
    QVERIFY2(notCarried == 0, qPrintable(detailed));
    QVERIFY2(notCarried < carried && carried < defaults, qPrintable(detailed));
    QVERIFY2(detailed.indexOf("some_kohya_gui_only_setting") < carried, qPrintable(detailed));
    QVERIFY2(detailed.indexOf("optimizer -> optimizer_type") > carried, qPrintable(detailed));
    QVERIFY2(detailed.indexOf("use_wandb false") > defaults, qPrintable(detailed));

    // Nothing lost: an information box that says so.
    QTemporaryDir dir;
    QFile clean(dir.filePath("clean.json"));
    QVERIFY(clean.open(QIODevice::WriteOnly));
    clean.write(R"({"LoRA_type": "Standard", "sdxl": true, "optimizer": "AdamW", "use_wandb": false})");
    clean.close();
    test::whenModalAppears([&](QWidget* w) {
      auto* box = qobject_cast<QMessageBox*>(w);
      QVERIFY(box);
      icon = box->icon();
      detailed = box->detailedText();
      box->accept();
    });
    MainWindow fresh;
    QVERIFY(fresh.importKohyaFile(clean.fileName()));
    QCOMPARE(icon, QMessageBox::Information);
    QVERIFY2(detailed.startsWith(QStringLiteral("Carried over (")), qPrintable(detailed));
  }
};

QTEST_MAIN(ConfigFilesTest)
#include "config_files_test.moc"

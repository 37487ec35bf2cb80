// Presets: every shipped file loads through core and validates; each tab has SDXL and FLUX
// presets; applying one first shows its changes (old -> new) and changes nothing until accepted;
// the list follows the preset folders; the current settings can be saved as a user preset.
#include <QComboBox>
#include <QDir>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "core/toml_config.h"
#include "core/validation.h"
#include "gui_test_support.h"
#include "preset_diff_dialog.h"
#include "preset_manager.h"
#include "training_tab.h"

using namespace sinter;
using namespace sinter::gui;

namespace {
const QString kPresets = QStringLiteral(SINTER_PRESETS_DIR);

void writeFile(const QString& path, const QByteArray& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text);
}
}  // namespace

class PresetsTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void everyPresetLoadsAndValidates() {
    const QFileInfoList files = QDir(kPresets).entryInfoList({"*.toml"}, QDir::Files);
    QVERIFY(files.size() >= 11);
    for (const QFileInfo& file : files) {
      LoadResult loaded;
      try {
        loaded = loadConfigFile(file.absoluteFilePath().toStdString());
      } catch (const ConfigError& e) {
        QFAIL(qPrintable(QString::fromStdString(formatAll(e.diagnostics()))));
      }
      const auto diags = validateConfig(loaded.config);
      QVERIFY2(!hasErrors(diags), qPrintable(file.fileName() + ": " + QString::fromStdString(formatAll(diags))));
      const PresetInfo info = readPresetInfo(file.absoluteFilePath(), false);
      QVERIFY2(info.error.isEmpty(), qPrintable(info.error));
      QVERIFY2(!info.title.isEmpty() && info.title != file.completeBaseName(), qPrintable(file.fileName()));
    }
  }

  void titleComesFromTheLeadingComment() {
    QTemporaryDir dir;
    writeFile(dir.filePath("one.toml"), "# Short title: with detail\n[optimizer]\nlearning_rate = 1e-4\n");
    writeFile(dir.filePath("two.toml"), "# The long one: a sentence that\n# runs on to the next line.\nseed = 1\n");
    writeFile(dir.filePath("three_words.toml"), "seed = 1\n");
    QCOMPARE(readPresetInfo(dir.filePath("one.toml"), false).title, QString("Short title: with detail"));
    const PresetInfo two = readPresetInfo(dir.filePath("two.toml"), false);
    QCOMPARE(two.title, QString("The long one"));
    QCOMPARE(two.description, QString("The long one: a sentence that runs on to the next line."));
    QCOMPARE(readPresetInfo(dir.filePath("three_words.toml"), false).title, QString("three words"));
  }

  void everyTabHasSdxlFluxAndCompilePresets() {
    PresetManager presets({kPresets}, QString());
    for (Tab tab : allTabs()) {
      int sdxl = 0, flux = 0, compile = 0;
      for (const PresetInfo& p : presets.presetsForTab(tab)) {
        if (p.tab && p.family == Family::SDXL) ++sdxl;
        if (p.tab && p.family == Family::FLUX) ++flux;
        if (QFileInfo(p.path).fileName().startsWith("compile_")) ++compile;
      }
      // Textual inversion trains no FLUX.1: neither FLUX presets nor the FLUX compile preset.
      const bool trainsFlux = tabTrainsFamily(tab, Family::FLUX);
      QVERIFY2(sdxl >= 1 && (flux >= 1) == trainsFlux, toString(tab));
      QCOMPARE(compile, trainsFlux ? 5 : 4);  // first use, faster, max speed, multi-res buckets, FLUX block swap
    }
  }

  void applyingShowsTheDiffFirst() {
    QTemporaryDir dir;
    const QString presetPath = dir.filePath("p.toml");
    writeFile(presetPath, "# Test preset\n[optimizer]\nlearning_rate = 5e-5\n[network]\nnetwork_dim = 64\n"
                          "[dataset]\ncaption_extension = \".caption\"\n");
    TrainingTab tab(Tab::LoRA, nullptr, {});
    test::setOption(tab.form(), "learning_rate", 1e-4);
    test::setOption(tab.form(), "network_dim", 8LL);
    const Config before = tab.currentConfig();

    // Cancel: the dialog listed the changes, and nothing was applied.
    QStringList rows;
    bool formUntouchedWhileAsking = false;
    test::whenModalAppears([&](QWidget* w) {
      auto* dialog = qobject_cast<PresetDiffDialog*>(w);
      QVERIFY(dialog);
      formUntouchedWhileAsking = tab.currentConfig().sameEffectiveValues(before);
      for (int r = 0; r < dialog->table()->rowCount(); ++r)
        rows << dialog->table()->item(r, 0)->data(Qt::UserRole).toString() + "|" + dialog->table()->item(r, 1)->text() +
                    "|" + dialog->table()->item(r, 2)->text();
      dialog->reject();
    });
    QVERIFY(!tab.applyPreset(presetPath));
    QVERIFY(formUntouchedWhileAsking);
    // caption_extension is already ".caption" (the default): not a change.
    QCOMPARE(rows, (QStringList{"network_dim|8|→ 64", "learning_rate|0.0001|→ 0.00005"}));
    QVERIFY(tab.currentConfig().sameEffectiveValues(before));

    // Accept: exactly those options change.
    test::acceptNextDialog();
    QVERIFY(tab.applyPreset(presetPath));
    const Config after = tab.currentConfig();
    QCOMPARE(after.getDouble("learning_rate"), 5e-5);
    QCOMPARE(after.getInt("network_dim"), 64LL);
    const auto changed = before.differingKeys(after);
    QCOMPARE(changed, (std::vector<std::string>{"network_dim", "learning_rate"}));
    QVERIFY(tab.document().isModified());
  }

  void listFollowsTheFoldersAndUserPresetsAreSaved() {
    QTemporaryDir shipped, user;
    writeFile(shipped.filePath("a.toml"), "# A for LoRA\n[model]\ntraining_type = \"lora\"\n");
    writeFile(shipped.filePath("b.toml"), "# B for fine-tune\n[model]\ntraining_type = \"finetune\"\n");
    PresetManager presets({shipped.path()}, user.path());
    QCOMPARE(presets.presetsForTab(Tab::LoRA).size(), size_t(1));
    TrainingTab tab(Tab::LoRA, &presets, {});
    auto* combo = tab.findChild<QComboBox*>("presetCombo");
    QCOMPARE(combo->count(), 2);  // "Choose a preset…" and A
    QCOMPARE(combo->itemText(1), QString("A for LoRA"));

    QSignalSpy changed(&presets, &PresetManager::changed);
    writeFile(shipped.filePath("c.toml"), "# C for any tab\n[optimizer]\nlearning_rate = 1e-3\n");
    QVERIFY(changed.wait(5000));  // the folder watcher noticed the new file
    QCOMPARE(combo->count(), 3);

    test::setOption(tab.form(), "network_dim", 12LL);
    QString error;
    QVERIFY2(tab.saveAsUserPreset("My dim 12", &error), qPrintable(error));
    const QString saved = QDir(user.path()).filePath("My dim 12.toml");
    QVERIFY(QFile::exists(saved));
    QTRY_COMPARE(combo->count(), 4);
    QVERIFY(combo->itemText(3).contains("My dim 12"));
    QCOMPARE(loadConfigFile(saved.toStdString()).config.getInt("network_dim"), 12LL);

    // Editing a preset in place retitles it.
    QSignalSpy edited(&presets, &PresetManager::changed);
    writeFile(shipped.filePath("a.toml"), "# A, renamed\n[model]\ntraining_type = \"lora\"\n");
    QVERIFY(edited.wait(5000));
    QTRY_COMPARE(combo->itemText(1), QString("A, renamed"));

    // A misspelt option is an error (a key that is no option only warns, as sd-scripts ignores it).
    writeFile(shipped.filePath("broken.toml"), "# Broken\nlearning_rat = 1\n");
    presets.rescan();
    bool listedWithError = false;
    for (const PresetInfo& p : presets.all())
      if (p.path.endsWith("broken.toml")) listedWithError = p.error.contains("broken.toml:2");
    QVERIFY(listedWithError);
  }
};

QTEST_MAIN(PresetsTest)
#include "presets_test.moc"

// Start and Print command: validation marks the offending fields, the command shown is exactly the
// one started (an argument list, no shell), its flags-only form equals core's buildArgv, and the
// run's TOML written beside the outputs is core's writer output.
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "app_paths.h"
#include "command_preview_dialog.h"
#include "core/argv.h"
#include "core/toml_config.h"
#include "gui_test_support.h"
#include "log_view.h"
#include "run_controller.h"
#include "run_monitor.h"
#include "run_panel.h"
#include "shell_quote.h"
#include "training_tab.h"

using namespace sinter;
using namespace sinter::gui;

class PrintCommandTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    test::isolateSettings();
    setRunnerPathPreference(QStringLiteral(SINTER_REPLAY_RUNNER));
    qputenv("SINTER_REPLAY_EVENTS", SINTER_GUI_TEST_DATA_DIR "/completed_run.events.jsonl");
  }

  void printCommandEqualsCoreArgv() {
    QTemporaryDir dir;
    TrainingTab tab(Tab::LoRA, nullptr, {});
    OptionForm* form = tab.form();
    test::setOption(form, "model_family", std::string("sdxl"));
    test::setOption(form, "output_dir", dir.filePath("out dir").toStdString());
    test::setOption(form, "output_name", std::string("my lora"));
    test::setOption(form, "learning_rate", 0.0002);
    test::setOption(form, "network_dim", 32LL);
    test::setOption(form, "compile", true);
    test::setOption(form, "network_args", StringList{"conv_dim=4", "conv_alpha=1"});
    QString error;
    const auto preview = tab.commandPreview(&error);
    QVERIFY2(preview, qPrintable(error));
    QCOMPARE(preview->program, runnerPath());
    const QString runFile = dir.filePath("out dir/my lora-sinter-run.toml");
    QCOMPARE(preview->arguments, (QStringList{"--config_file", runFile, "--events", "jsonl", "--control", "stdin"}));
    QStringList coreArgs;
    for (const std::string& a : buildArgv(tab.currentConfig())) coreArgs << QString::fromStdString(a);
    QCOMPARE(preview->equivalentArguments, coreArgs);
    QVERIFY(coreArgs.contains("--learning_rate"));
    QCOMPARE(preview->toml, QString::fromStdString(writeConfigToml(tab.currentConfig(), Tab::LoRA, Family::SDXL)));
    CommandPreviewDialog dialog(*preview);
    const QString shown = dialog.shownText();
    QVERIFY(shown.contains(shellCommandLine(preview->program, preview->arguments)));
    QVERIFY(shown.contains(shellCommandLine(preview->program, coreArgs)));
    QVERIFY(shown.contains("'" + runFile + "'"));  // quoted: the path holds spaces
    QVERIFY(shown.contains(preview->toml));
    // The same run as sd-scripts is started, which sinter-runner takes too.
    QCOMPARE(preview->sdScriptsArguments, (QStringList{"sdxl_train_network.py", "--config_file", runFile}));
    QVERIFY(shown.contains("accelerate launch sdxl_train_network.py --config_file '" + runFile + "'"));
    QVERIFY(shown.contains(shellCommandLine(preview->program, preview->sdScriptsArguments)));
  }

  void gpusSettingAddsNprocPerNodeAndIsRemembered() {
    QTemporaryDir dir;
    TrainingTab tab(Tab::LoRA, nullptr, {});
    test::setOption(tab.form(), "model_family", std::string("sdxl"));
    test::setOption(tab.form(), "output_dir", dir.path().toStdString());
    QSpinBox* gpus = tab.runPanel()->gpuCountBox();
    gpus->setValue(1);
    QString error;
    auto preview = tab.commandPreview(&error);
    QVERIFY2(preview, qPrintable(error));
    QVERIFY(!preview->arguments.contains("--nproc_per_node"));
    gpus->setValue(2);
    preview = tab.commandPreview(&error);
    QVERIFY2(preview, qPrintable(error));
    const QStringList launch{"--nproc_per_node", "2"};
    QCOMPARE(preview->arguments.mid(preview->arguments.size() - 2), launch);
    QCOMPARE(preview->equivalentArguments.mid(preview->equivalentArguments.size() - 2), launch);
    QVERIFY(!preview->toml.contains("nproc"));  // a launch setting, not a config key
    QCOMPARE(preview->sdScriptsArguments.mid(0, 3), (QStringList{"--num_processes", "2", "sdxl_train_network.py"}));
    // The next tab (or the next start of the app) begins with the same count.
    TrainingTab next(Tab::DreamBooth, nullptr, {});
    QCOMPARE(next.runPanel()->gpuCountBox()->value(), 2);
    gpus->setValue(1);
  }

  void startWithProblemsMarksFieldsAndRunsNothing() {
    TrainingTab tab(Tab::LoRA, nullptr, {});
    QSignalSpy errors(&tab, &TrainingTab::errorReported);
    test::setOption(tab.form(), "model_family", std::string("sdxl"));
    test::setOption(tab.form(), "compile", true);
    test::setOption(tab.form(), "compile_fullgraph", true);
    test::setOption(tab.form(), "split_attn", true);
    QVERIFY(!tab.startRun());
    QCOMPARE(errors.count(), 1);
    QVERIFY(!tab.isRunning());
    // The cross-field rule names its keys; at least one of them is marked on the form.
    const bool marked = !tab.form()->editor("compile_fullgraph")->problem().isEmpty() ||
                        !tab.form()->editor("split_attn")->problem().isEmpty();
    QVERIFY2(marked, qPrintable(errors.first().at(1).toString()));
  }

  void startWritesTheRunFileAndStartsTheRunner() {
    QTemporaryDir dir;
    TrainingTab tab(Tab::LoRA, nullptr, {});
    OptionForm* form = tab.form();
    QTemporaryDir models;
    const QString checkpoint = models.filePath("sdxl.safetensors");
    QVERIFY(test::writeTinySafetensors(checkpoint, {"conditioner.embedders.0.x", "model.diffusion_model.y"}));
    test::setOption(form, "pretrained_model_name_or_path", checkpoint.toStdString());
    test::setOption(form, "output_dir", dir.path().toStdString());
    test::setOption(form, "output_name", std::string("tiny"));
    QSignalSpy errors(&tab, &TrainingTab::errorReported);
    QSignalSpy finished(tab.runPanel()->controller(), &RunController::finished);
    QVERIFY2(tab.startRun(), errors.isEmpty() ? "" : qPrintable(errors.first().at(1).toString()));
    QVERIFY(finished.wait(15000));
    const QString runFile = dir.filePath("tiny-sinter-run.toml");
    QVERIFY(QFile::exists(runFile));
    const LoadResult written = loadConfigFile(runFile.toStdString());
    QCOMPARE(written.config.family(), std::optional<Family>(Family::SDXL));  // the detected family is named
    tab.runPanel()->logView()->flush();
    QVERIFY(tab.runPanel()->logView()->text().contains("run file " + runFile));
    QCOMPARE(tab.runPanel()->monitor()->finalStatus(), QString("completed"));
  }
};

QTEST_MAIN(PrintCommandTest)
#include "print_command_test.moc"

// The Tools tab against the real sinter-runner: the form is built from core's tool table, a
// required flag left empty is refused before anything starts, extract_lora_from_models and then
// resize_lora run from the form on two tiny checkpoints the runner makes, the log streams, and the
// result shows the sizes and what check_lora_weights says of the LoRA written (an SD 3.x LoRA named
// as such, then merged into its checkpoint from the form). The main window has
// the tab after the training tabs, and its file actions leave it alone.
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "app_paths.h"
#include "gui_test_support.h"
#include "log_view.h"
#include "main_window.h"
#include "tools_tab.h"

using namespace sinter;
using namespace sinter::gui;

namespace {

using test::realRunner;

bool runRunner(const QStringList& args) {
  QProcess p;
  p.start(realRunner(), args);
  return p.waitForFinished(120000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

}  // namespace

class ToolsTabTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    test::isolateSettings();
    if (!QFileInfo::exists(realRunner())) QSKIP("this build has no sinter-runner");
    setRunnerPathPreference(realRunner());
  }

  void theFormFollowsTheToolTableAndRefusesAMissingRequiredFlag() {
    ToolsTab tools;
    tools.selectTool(QStringLiteral("svd_merge_lora"));
    QCOMPARE(tools.selectedTool(), QStringLiteral("svd_merge_lora"));
    tools.setFlagValue(QStringLiteral("models"), QStringLiteral("a.safetensors;b.safetensors"));
    tools.setFlagValue(QStringLiteral("ratios"), QStringLiteral("1 -0.5"));
    tools.setFlagValue(QStringLiteral("new_rank"), QStringLiteral("8"));
    QString error;
    QVERIFY(tools.arguments(&error).isEmpty());  // --save_to is required
    QVERIFY2(error.contains(QStringLiteral("--save_to")), qPrintable(error));
    tools.setFlagValue(QStringLiteral("save_to"), QStringLiteral("ab.safetensors"));
    tools.setFlagValue(QStringLiteral("device"), QStringLiteral("cuda"));
    QCOMPARE(tools.arguments(&error),
             QStringList({"svd_merge_lora", "--models", "a.safetensors", "b.safetensors", "--ratios", "1", "-0.5", "--save_to",
                          "ab.safetensors", "--new_rank", "8", "--device", "cuda"}));
    // A refused form starts nothing.
    tools.setFlagValue(QStringLiteral("save_to"), QString());
    tools.startTool();
    QVERIFY(!tools.isRunning());
    QVERIFY(tools.statusText().contains(QStringLiteral("--save_to")));
  }

  void extractThenResizeFromTheFormWithTheirResults() {
    QTemporaryDir dir;
    const QString base = dir.filePath("base.safetensors"), tuned = dir.filePath("tuned.safetensors");
    const QString extracted = dir.filePath("extracted.safetensors"), resized = dir.filePath("resized.safetensors");
    QVERIFY(runRunner({"--init_checkpoint", base, "--model_family", "sdxl", "--model_size", "tiny", "--seed", "1"}));
    QVERIFY(runRunner({"--init_checkpoint", tuned, "--model_family", "sdxl", "--model_size", "tiny", "--seed", "2"}));

    ToolsTab tools;
    QSignalSpy finished(&tools, &ToolsTab::toolFinished);
    QSignalSpy checked(&tools, &ToolsTab::checkFinished);
    tools.selectTool(QStringLiteral("extract_lora_from_models"));
    tools.setFlagValue(QStringLiteral("model_org"), base);
    tools.setFlagValue(QStringLiteral("model_tuned"), tuned);
    tools.setFlagValue(QStringLiteral("save_to"), extracted);
    tools.setFlagValue(QStringLiteral("dim"), QStringLiteral("4"));
    tools.startTool();
    QVERIFY(tools.isRunning());
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.takeFirst().at(0).toInt(), 0);
    QVERIFY2(QFileInfo::exists(extracted), qPrintable(tools.statusText()));
    QVERIFY(tools.statusText().contains(extracted));
    QVERIFY(checked.wait(60000));
    const QString extractResult = tools.resultText();
    QVERIFY2(extractResult.contains(QStringLiteral("input --model_org")), qPrintable(extractResult));
    QVERIFY2(extractResult.contains(QStringLiteral("lora_unet_")), qPrintable(extractResult));  // check_lora_weights' lines

    checked.clear();
    tools.selectTool(QStringLiteral("resize_lora"));
    tools.setFlagValue(QStringLiteral("model"), extracted);
    tools.setFlagValue(QStringLiteral("save_to"), resized);
    tools.setFlagValue(QStringLiteral("new_rank"), QStringLiteral("2"));
    tools.setFlagValue(QStringLiteral("verbose"), QStringLiteral("1"));
    tools.startTool();
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.takeFirst().at(0).toInt(), 0);
    QVERIFY(QFileInfo::exists(resized));
    QVERIFY(checked.wait(60000));
    tools.log()->flush();
    QVERIFY2(tools.resultText().contains(QStringLiteral("lora_down")), qPrintable(tools.resultText()));

    // A tool's own refusal reaches the status line with its exit code.
    tools.setFlagValue(QStringLiteral("new_rank"), QStringLiteral("0"));
    tools.startTool();
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.takeFirst().at(0).toInt(), 2);
    QVERIFY2(tools.statusText().contains(QStringLiteral("exit 2")), qPrintable(tools.statusText()));
  }

  void sd3ExtractThenMergeIntoTheCheckpointFromTheForm() {
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("tuned")));
    const QString base = dir.filePath("sd3.safetensors"), tuned = dir.filePath("tuned/sd3_tuned.safetensors");
    const QString extracted = dir.filePath("sd3_lora.safetensors"), merged = dir.filePath("sd3_merged.safetensors");
    QVERIFY(runRunner({"--init_checkpoint", base, "--model_family", "sd3", "--model_size", "tiny", "--seed", "1"}));
    QVERIFY(runRunner({"--init_checkpoint", tuned, "--model_family", "sd3", "--model_size", "tiny", "--seed", "2"}));

    ToolsTab tools;
    QSignalSpy finished(&tools, &ToolsTab::toolFinished);
    QSignalSpy checked(&tools, &ToolsTab::checkFinished);
    tools.selectTool(QStringLiteral("extract_lora_from_models"));
    tools.setFlagValue(QStringLiteral("model_org"), base);
    tools.setFlagValue(QStringLiteral("model_tuned"), tuned);
    tools.setFlagValue(QStringLiteral("save_to"), extracted);
    tools.setFlagValue(QStringLiteral("dim"), QStringLiteral("2"));
    tools.startTool();
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.takeFirst().at(0).toInt(), 0);
    QVERIFY(checked.wait(60000));
    // check_lora_weights on the LoRA written names SD 3.x and networks.lora_sd3.
    const QString result = tools.resultText();
    QVERIFY2(result.contains(QStringLiteral("family: SD 3.x")), qPrintable(result));
    QVERIFY2(result.contains(QStringLiteral("network: networks.lora_sd3")), qPrintable(result));
    QVERIFY2(result.contains(QStringLiteral("lora_unet_joint_blocks_0_x_block_attn_qkv.lora_down.weight")), qPrintable(result));

    tools.selectTool(QStringLiteral("merge_lora"));
    tools.setFlagValue(QStringLiteral("models"), extracted);
    tools.setFlagValue(QStringLiteral("ratios"), QStringLiteral("0.5"));
    tools.setFlagValue(QStringLiteral("sd_model"), base);
    tools.setFlagValue(QStringLiteral("save_to"), merged);
    tools.setFlagValue(QStringLiteral("save_precision"), QStringLiteral("bf16"));
    tools.startTool();
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.takeFirst().at(0).toInt(), 0);
    QVERIFY2(tools.statusText().contains(merged), qPrintable(tools.statusText()));
    QVERIFY(QFileInfo(merged).size() > 0);
    QVERIFY(QFileInfo(merged).size() < QFileInfo(base).size());  // bf16 where the tiny file is float32
  }

  void theMainWindowHasTheTabAndItsFileActionsLeaveItAlone() {
    MainWindow window;
    QCOMPARE(window.tabs()->count(), 5);  // LoRA, DreamBooth, Fine-tune, Textual Inversion, Tools
    QCOMPARE(window.tabs()->widget(4), static_cast<QWidget*>(window.toolsTab()));
    window.tabs()->setCurrentIndex(4);
    QVERIFY(window.currentTab() == nullptr);
    QVERIFY(window.windowTitle().contains(QStringLiteral("Tools")));
  }
};

QTEST_MAIN(ToolsTabTest)
#include "tools_tab_test.moc"

// Tool (not a test): renders the main window in the states worth looking at and saves PNGs, for
// review under Xvfb: `xvfb-run -s "-screen 0 1280x800x24" gui_screenshot_tool OUTDIR [--lang ja]
// [--real-runner PATH] [--tools-lora LORA]`; with a real runner it also shows the tiny demo training for
// real, and with --tools-lora (and a real runner) only the Tools tab resizing LORA.
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QElapsedTimer>
#include <QGroupBox>
#include <QProcess>
#include <QPushButton>
#include <QTemporaryDir>
#include <QScrollArea>
#include <QScrollBar>
#include <QEventLoop>
#include <QTabWidget>
#include <QTimer>

#include "app_paths.h"
#include "collapsible_section.h"
#include "checkpoint_grid_window.h"
#include "checkpoint_grid_panel.h"
#include "command_preview_dialog.h"
#include "compile_settings_panel.h"
#include "dataset_check_panel.h"
#include "demo_folder.h"
#include "gui_test_support.h"
#include "log_view.h"
#include "loss_chart.h"
#include "main_window.h"
#include "queue_panel.h"
#include "preset_diff_dialog.h"
#include "preset_changes.h"
#include "run_controller.h"
#include "run_monitor.h"
#include "run_panel.h"
#include "tools_tab.h"
#include "training_tab.h"
#include "translations_loader.h"

using namespace sinter;
using namespace sinter::gui;

namespace {

void settle(int ms = 150) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < ms) QApplication::processEvents(QEventLoop::AllEvents, 20);
}

void shoot(QWidget* w, const QString& dir, const QString& name) {
  settle();
  w->grab().save(QDir(dir).filePath(name + ".png"));
  std::printf("%s\n", qPrintable(QDir(dir).filePath(name + ".png")));
}

QScrollArea* scrollOf(TrainingTab* tab) { return tab->findChild<QScrollArea*>(); }

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  test::isolateSettings();
  const QString out = argc > 1 ? argv[1] : QStringLiteral("/tmp/screens");
  QString lang, realRunner, toolsLora;
  for (int i = 2; i + 1 < argc; ++i) {
    if (QString(argv[i]) == "--lang") lang = argv[i + 1];
    if (QString(argv[i]) == "--real-runner") realRunner = argv[i + 1];
    if (QString(argv[i]) == "--tools-lora") toolsLora = argv[i + 1];
  }
  if (!lang.isEmpty()) installTranslations(app, lang);
  const QString suffix = lang.isEmpty() ? QString() : "_" + lang;
  QDir().mkpath(out);

  MainWindow window;
  window.resize(1280, 800);
  window.show();
  settle(300);

  // The Tools tab resizing a given LoRA, with its result and log.
  auto shootToolsResize = [&](const QString& lora, const QString& resized) {
    window.tabs()->setCurrentWidget(window.toolsTab());
    ToolsTab* tools = window.toolsTab();
    tools->selectTool(QStringLiteral("resize_lora"));
    tools->setFlagValue(QStringLiteral("model"), lora);
    tools->setFlagValue(QStringLiteral("save_to"), resized);
    tools->setFlagValue(QStringLiteral("new_rank"), QStringLiteral("4"));
    tools->setFlagValue(QStringLiteral("verbose"), QStringLiteral("1"));
    tools->startTool();
    for (int i = 0; i < 300 && tools->isRunning(); ++i) settle(200);
    settle(3000);  // check_lora_weights on the result
    shoot(&window, out, "tools_resize" + suffix);
  };
  if (!toolsLora.isEmpty() && !realRunner.isEmpty()) {
    setRunnerPathPreference(realRunner);
    QTemporaryDir work;
    shootToolsResize(QFileInfo(toolsLora).absoluteFilePath(), work.filePath(QStringLiteral("resized.safetensors")));
    return 0;
  }

  for (Tab t : allTabs()) {
    TrainingTab* tab = window.tab(t);
    window.tabs()->setCurrentWidget(tab);
    const QString base = QString::fromUtf8(toString(t));
    for (const char* family : {"sdxl", "sd15", "flux", "sd3"}) {
      if (t != Tab::LoRA && (std::string(family) == "flux" || std::string(family) == "sd3")) continue;
      test::setOption(tab->form(), "model_family", std::string(family));
      tab->form()->advancedSection()->setExpanded(false);
      scrollOf(tab)->verticalScrollBar()->setValue(0);
      shoot(&window, out, base + "_" + family + "_top" + suffix);
      // Advanced open, scrolled to where the compile panel lives (shown for SDXL/FLUX only).
      tab->form()->advancedSection()->setExpanded(true);
      test::setOption(tab->form(), "compile", std::string(family) == "sdxl" || std::string(family) == "flux");
      settle();
      auto* panel = tab->form()->compilePanel();
      // The runner's plan for this family (a process of its own, after a short pause).
      const QString model = std::string(family) == "flux" ? QStringLiteral("DiT") : QStringLiteral("U-Net");
      for (int i = 0; i < 100 && !panel->isHidden() && !panel->runnerPlanText().contains(model); ++i) settle(100);
      scrollOf(tab)->verticalScrollBar()->setValue(
          panel->isHidden() ? scrollOf(tab)->verticalScrollBar()->maximum()
                            : panel->mapTo(tab->form(), QPoint(0, 0)).y() - 8);
      shoot(&window, out, base + "_" + family + "_advanced" + suffix);
      // The family's own group under Parameters (FLUX.1 and SD 3.x have one; SDXL options are shared).
      for (QGroupBox* box : tab->form()->findChildren<QGroupBox*>())
        if (box->title() == familyDisplayName(*familyFromString(family)) && !box->isHidden()) {
          tab->form()->advancedSection()->setExpanded(false);
          settle();
          scrollOf(tab)->verticalScrollBar()->setValue(box->mapTo(tab->form(), QPoint(0, 0)).y() - 8);
          shoot(&window, out, base + "_" + family + "_family_group" + suffix);
        }
    }
  }

  // The Textual Inversion tab's embedding settings (token, initial word, vectors, template), filled in.
  TrainingTab* ti = window.tab(Tab::TextualInversion);
  window.tabs()->setCurrentWidget(ti);
  test::setOption(ti->form(), "model_family", std::string("sd15"));
  test::setOption(ti->form(), "token_string", std::string("mychar"));
  test::setOption(ti->form(), "init_word", std::string("girl"));
  test::setOption(ti->form(), "num_vectors_per_token", 4LL);
  test::setOption(ti->form(), "use_object_template", true);
  ti->form()->advancedSection()->setExpanded(false);
  settle();
  scrollOf(ti)->verticalScrollBar()->setValue(ti->form()->editor("token_string")->mapTo(ti->form(), QPoint(0, 0)).y() - 120);
  shoot(&window, out, "textual_inversion_embedding" + suffix);

  // A run in progress: recorded events replayed through a real process, stopped after the shot.
  TrainingTab* lora = window.tab(Tab::LoRA);
  window.tabs()->setCurrentWidget(lora);
  lora->form()->advancedSection()->setExpanded(false);
  scrollOf(lora)->verticalScrollBar()->setValue(0);
  RunPanel* run = lora->runPanel();
  run->startProcess(QStringLiteral(SINTER_REPLAY_RUNNER),
                    {QStringLiteral(SINTER_GUI_TEST_DATA_DIR "/stoppable_run.events.jsonl"), "--stderr",
                     QStringLiteral(SINTER_GUI_TEST_DATA_DIR "/completed_run.stderr.txt"), "--until-term"},
                    QString());
  settle(3000);
  shoot(&window, out, "run_in_progress" + suffix);
  run->requestStop();
  run->controller()->waitForFinished(5000);
  settle(300);
  shoot(&window, out, "run_stopped" + suffix);

  if (!realRunner.isEmpty()) {
    // The lead's tiny demo through the real runner: inputs made by the runner, as .ci/demo does.
    QTemporaryDir work;
    QDir::setCurrent(work.path());
    setRunnerPathPreference(realRunner);
    if (const QString failure = test::makeDemoInputs(realRunner); !failure.isEmpty()) qWarning("%s", qPrintable(failure));
    TrainingTab* real = window.tab(Tab::LoRA);
    QString error;
    real->loadFile(QStringLiteral(SINTER_PRESETS_DIR "/demo_sdxl_lora_tiny.toml"), &error);
    real->startRun();
    for (int i = 0; i < 600 && real->runPanel()->monitor()->lastStep() < 25 && real->isRunning(); ++i) settle(200);
    shoot(&window, out, "real_run_in_progress" + suffix);
    real->runPanel()->controller()->waitForFinished(600000);
    settle(500);
    shoot(&window, out, "real_run_finished" + suffix);

    // The checkpoint grid of the demo's saves (the base model and each file against the sample prompts).
    real->showCheckpointGrid();
    CheckpointGridWindow* grid = real->checkpointGridWindow();
    QEventLoop gridMade;
    QObject::connect(grid->panel(), &CheckpointGridPanel::gridFinished, &gridMade, &QEventLoop::quit);
    QTimer::singleShot(600000, &gridMade, &QEventLoop::quit);
    grid->panel()->makeButton()->click();
    gridMade.exec();
    settle(300);
    shoot(grid, out, "checkpoint_grid" + suffix);
    grid->close();

    // The run queue: the demo's settings queued twice (the second into an output folder of its own).
    window.queuePanel()->addCurrentConfig();
    window.queuePanel()->addCurrentConfig();
    window.queueDock()->show();
    settle(300);
    shoot(&window, out, "queue" + suffix);

    // The Tools tab: the demo's LoRA resized from the form.
    shootToolsResize(QDir::current().filePath(QStringLiteral("demo-output/lora/demo_lora.safetensors")),
                     QDir::current().filePath(QStringLiteral("demo-output/lora/demo_lora_r4.safetensors")));
  }

  // The Dataset check window, with a report as the runner sends it.
  events::DatasetCheck check;
  check.images = 41;
  check.contents_compared = check.pixels_decoded = true;
  check.missing_captions = {{"/data/train/10_cat/cat_017.png", "no .txt caption file; the class tokens \"cat\" stand in"},
                            {"/data/train/10_cat/cat_021.png", "its caption path /data/train/10_cat/cat_021.txt is a folder, not a file; "
                                                               "the class tokens \"cat\" stand in"}};
  check.empty_captions = {{"/data/train/10_cat/cat_003.png", "its caption file /data/train/10_cat/cat_003.txt holds only blank lines"}};
  check.duplicates = {{"/data/train/10_cat/cat_004.png", "/data/train/10_cat/cat_004 (1).png"}};
  check.too_small = {{"/data/train/10_cat/thumb.jpg", "180x120 is smaller than the smallest bucket side, min_bucket_reso 256: it is "
                                                      "enlarged to 1248x832 for bucket 1216x832"}};
  check.unreadable = {{"/data/train/10_cat/cat_030.webp", "its header reads but its pixels do not decode (cannot decode WebP image "
                                                          "(corrupt or unsupported)): a run stops when it loads it"}};
  check.buckets = {{832, 1216, 9, 90}, {1024, 1024, 22, 210}, {1216, 832, 10, 100}};
  check.folders = {{"/data/train/10_cat", 40, 10, 400, 0, false}, {"/data/reg/1_cat", 1, 1, 1, 0, true}};
  lora->datasetCheckPanel()->showReport(check);
  QWidget* checkWindow = lora->datasetCheckPanel()->window();
  checkWindow->show();
  shoot(checkWindow, out, "dataset_check" + suffix);
  checkWindow->hide();

  // Dialogs: the preset diff and Print command.
  Config preset;
  preset.set("learning_rate", 5e-5);
  preset.set("network_dim", 64LL);
  preset.set("compile", true);
  PresetDiffDialog diff("SDXL LoRA", presetChanges(lora->currentConfig(), preset), &window);
  diff.show();
  shoot(&diff, out, "preset_diff" + suffix);
  test::setOption(lora->form(), "output_dir", std::string("/data/out"));
  test::setOption(lora->form(), "output_name", std::string("my_lora"));
  QString error;
  if (auto preview = lora->commandPreview(&error)) {
    CommandPreviewDialog dialog(*preview, &window);
    dialog.show();
    shoot(&dialog, out, "print_command" + suffix);
  }
  return 0;
}

#pragma once
// One training tab (LoRA, DreamBooth or Fine-tune): its config file, presets, option form and
// run area. Problems are reported through errorReported(); the window shows them.
#include <QWidget>
#include <optional>

#include "command_preview_dialog.h"
#include "config_document.h"
#include "core/config.h"
#include "preset_manager.h"

class QAction;
class QComboBox;
class QDialog;
class QLabel;
class QPushButton;

namespace sinter::gui {

class CheckpointGridWindow;
class DatasetCheckPanel;
class OptionForm;
class RunPanel;

// The window's file actions, shown as buttons in each tab's Configuration box.
struct FileActions {
  QAction* open = nullptr;
  QAction* save = nullptr;
  QAction* saveAs = nullptr;
};

class TrainingTab : public QWidget {
  Q_OBJECT
 public:
  TrainingTab(Tab tab, PresetManager* presets, const FileActions& actions, QWidget* parent = nullptr);
  Tab tab() const { return tab_; }
  QString title() const;
  OptionForm* form() const { return form_; }
  RunPanel* runPanel() const { return run_; }
  ConfigDocument& document() { return document_; }
  const ConfigDocument& document() const { return document_; }

  Config currentConfig() const;
  std::optional<Family> family() const;

  void newConfig();
  // Loads a file into the form; on failure the form is kept and `error` names file and line.
  bool loadFile(const QString& path, QString* error, QStringList* warnings = nullptr);
  bool saveFile(const QString& path, QString* error);
  // Shows a config that did not come from a TOML file (kohya_ss import): untitled and modified.
  void showImported(const Config& config);

  // Shows the preset's changes and applies them if the user agrees; false when nothing changed.
  bool applyPreset(const QString& presetPath);
  bool saveAsUserPreset(const QString& name, QString* error);

  // The command, run file and TOML that Start would use.
  std::optional<CommandPreview> commandPreview(QString* error) const;
  // Validates (marking offending fields), writes the run's TOML and starts the runner.
  bool startRun();
  // The config the Queue panel's "Add current config to queue" snapshots: checked as Start checks
  // it (offending fields marked, the problems reported under `title`); nullopt when refused.
  std::optional<Config> configForQueue(const QString& title);
  // A queued run: the runner on `tomlPath` (the queue's snapshot) as Start starts the form's file,
  // with `extraArguments` (--output_dir, --resume), in `workingDir`; false while a run is going.
  bool startQueuedRun(const QString& tomlPath, const QStringList& extraArguments, const QString& workingDir);
  bool isRunning() const;
  // Runs `sinter-runner --check_dataset` on the settings as they are (written to a file of its own:
  // no output folder needed) and shows its report in the Dataset check window.
  void checkDataset();
  // The Dataset check window's panel: the last report, from a check or from a run's start.
  DatasetCheckPanel* datasetCheckPanel() const { return datasetCheck_; }
  // The Checkpoint grid window on the output folder of the settings as they are (the sample gallery's
  // "Checkpoint grid…", Run ▸ Checkpoint grid…).
  void showCheckpointGrid();
  CheckpointGridWindow* checkpointGridWindow() const { return gridWindow_; }

 signals:
  void documentChanged();
  void runningChanged(bool running);
  void errorReported(const QString& title, const QString& message);

 private:
  QWidget* buildConfigurationBox(const FileActions& actions);
  void refreshPresetList();
  void onPresetApplyClicked();
  void onSavePresetClicked();
  void printCommand();
  void setConfigQuietly(const Config& config);
  // The config a run or a check is given: the form's, naming the family the app settled on.
  Config runConfig() const;
  // Start's checks of the form: false (fields marked, reported under `title`) when it is refused.
  bool checkBeforeRun(const QString& title, std::vector<Diagnostic>* warnings);
  void showDatasetCheckWindow();

  Tab tab_;
  PresetManager* presets_;
  ConfigDocument document_;
  OptionForm* form_;
  RunPanel* run_;
  QLabel* fileLabel_ = nullptr;
  QComboBox* presetCombo_ = nullptr;
  QPushButton* applyPreset_ = nullptr;
  QDialog* datasetCheckWindow_ = nullptr;
  DatasetCheckPanel* datasetCheck_ = nullptr;
  CheckpointGridWindow* gridWindow_ = nullptr;
  QString datasetCheckToml_;  // the file the last check read (a temporary folder of the app's)
  bool loading_ = false;
};

QString tabTitle(Tab tab);

}  // namespace sinter::gui

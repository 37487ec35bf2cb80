#pragma once
// The Checkpoint grid window's panel (issue 57): the files a run saved in its output folder, each
// with a check box (the base model, step 0, is always a row), "Make grid", which has the owner start
// `sinter-runner --sample_grid` (with an argument list, through a RunController), its progress and
// log, and the grid it wrote shown with its row and column headers (checkpoint_grid_view.h).
#include <QStringList>
#include <QWidget>

#include "core/events.h"
#include "core/option.h"

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QScrollArea;

namespace sinter::gui {

class CheckpointGridView;
class LogView;
class RunController;

class CheckpointGridPanel : public QWidget {
  Q_OBJECT
 public:
  explicit CheckpointGridPanel(QWidget* parent = nullptr);

  // Lists the *.safetensors files of `folder` (the run's output_dir) that a `tab` run's grid takes,
  // oldest first, each checked; an empty folder name says that output_dir is not set. A LoRA run's
  // grid takes the files holding LoRA modules: the embeddings a pivotal tuning run writes apart
  // beside its LoRA files (<lora>_<token>.safetensors) are not listed (each LoRA file's row has the
  // embeddings it bundles), and the summary says how many were left out.
  void setOutputFolder(const QString& folder, Tab tab);
  QString outputFolder() const { return folder_; }
  // The checked saved files (absolute paths), in the list's order: the grid's rows after the base model.
  QStringList checkedFiles() const;

  // Starts the runner; `output` is the PNG it is asked to write, shown when it exits 0.
  void startGrid(const QString& program, const QStringList& arguments, const QString& workingDir, const QString& output);
  bool isRunning() const;
  // Reads a grid PNG and shows it; false (and the summary says why) when it cannot be shown.
  bool showGrid(const QString& path);
  // Why no grid could be started (the settings could not be written), in the summary.
  void showProblem(const QString& message);

  QListWidget* fileList() const { return files_; }
  QPushButton* makeButton() const { return make_; }
  QPushButton* stopButton() const { return stop_; }
  QPushButton* refreshButton() const { return refresh_; }
  QProgressBar* progressBar() const { return progress_; }
  CheckpointGridView* view() const { return view_; }
  LogView* log() const { return log_; }
  RunController* controller() const { return controller_; }
  QString summaryText() const;

 signals:
  // "Make grid": the owner writes the config as it is now and calls startGrid.
  void gridRequested();
  // "Refresh": the owner lists the output folder of the settings as they are now (setOutputFolder).
  void refreshRequested();
  void gridFinished(int exitCode);

 private:
  void onEvent(const events::Event& event);
  void onFinished(int exitCode, bool crashed);
  void updateButtons();

  QString folder_;
  QString output_;  // what the running grid writes
  QLabel* summary_;
  QListWidget* files_;
  QPushButton* refresh_;
  QPushButton* make_;
  QPushButton* stop_;
  QProgressBar* progress_;
  CheckpointGridView* view_;
  QScrollArea* scroll_;
  LogView* log_;
  RunController* controller_;
  QStringList runnerErrors_;
};

}  // namespace sinter::gui

#pragma once
// A training tab's Checkpoint grid window (issue 57): its panel (checkpoint_grid_panel.h) on the
// output folder of the tab's settings, and "Make grid" run as `sinter-runner --config_file F
// --sample_grid OUT.png FILE ... --events jsonl`, the settings as they are written to a file of the
// window's own (as the dataset check writes them: the run's file is left alone) and the PNG written
// to <output_dir>/sample/<output_name>_grid_<date>-<time>.png.
#include <QDialog>
#include <functional>

#include "core/config.h"

namespace sinter::gui {

class CheckpointGridPanel;

class CheckpointGridWindow : public QDialog {
  Q_OBJECT
 public:
  // `settings`: the tab's config as a run would be given it, read when the window opens and when a
  // grid is made.
  CheckpointGridWindow(Tab tab, std::function<Config()> settings, const QString& title, QWidget* parent = nullptr);
  ~CheckpointGridWindow() override;

  // Lists the files of the settings' output_dir and shows the window.
  void showForSettings();
  CheckpointGridPanel* panel() const { return panel_; }

 private:
  void makeGrid();

  Tab tab_;
  std::function<Config()> settings_;
  CheckpointGridPanel* panel_;
  QString toml_;  // the settings the running grid reads
};

}  // namespace sinter::gui

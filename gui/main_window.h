#pragma once
// The main window: the LoRA, DreamBooth, Fine-tune and Textual Inversion tabs, the Tools tab (the LoRA tools), the run queue (a dock), the File
// and Run menus, the title with the current file and its modified mark, and the prompts before losing work or a run.
#include <QMainWindow>
#include <vector>

#include "core/option.h"

class QDockWidget;
class QMenu;
class QTabWidget;

namespace sinter {
struct KohyaImportResult;
}

namespace sinter::gui {

class PresetManager;
class QueuePanel;
class ToolsTab;
class TrainingTab;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  TrainingTab* tab(Tab tab) const;
  TrainingTab* currentTab() const;  // null on the Tools tab
  ToolsTab* toolsTab() const { return toolsTab_; }
  QTabWidget* tabs() const { return tabs_; }
  PresetManager* presets() const { return presets_; }
  QueuePanel* queuePanel() const { return queue_; }
  QDockWidget* queueDock() const { return queueDock_; }

  // Opens a config into the tab its training_type names (else the current tab); errors are shown.
  bool openFile(const QString& path);
  bool importKohyaFile(const QString& path);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildMenus();
  void updateTitle();
  void updateRecentMenu();
  void showError(const QString& title, const QString& message);
  // Save / Discard / Cancel for a modified tab; false when the user cancels.
  bool maybeSave(TrainingTab* tab);
  bool save(TrainingTab* tab);
  bool saveAs(TrainingTab* tab);
  void newConfig();
  void openDialog();
  void importDialog();
  // The import's three groups; what is not carried over (it changes training) comes first.
  void showImportReport(const KohyaImportResult& result, const QString& fileName, const QString& tabTitle);
  void chooseRunner();
  void about();
  void closeWhenRunsEnded();

  QTabWidget* tabs_;
  std::vector<TrainingTab*> trainingTabs_;
  ToolsTab* toolsTab_ = nullptr;
  PresetManager* presets_;
  QueuePanel* queue_ = nullptr;  // the run queue, in a dock below the tabs
  QDockWidget* queueDock_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QAction* openAction_;
  QAction* saveAction_;
  QAction* saveAsAction_;
  bool closingAfterRuns_ = false;  // the user chose to quit; runs are saving
};

}  // namespace sinter::gui

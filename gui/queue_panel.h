#pragma once
// The Queue panel (a dock of the main window; DESIGN.md §3, "Run queues"): the app's run queue with
// each entry's status, "Add current config to queue" (a snapshot of the current tab's settings),
// Up/Down, Remove, Resume (an interrupted run again from its last saved state), Run again, Start
// and Stop queue, what a failed run does to the rest, and a command to run when the queue ends. At
// the end a desktop notification (the system tray's, where there is one) and the status bar say
// how it went.
#include <QWidget>
#include <functional>
#include <vector>

#include "core/run_queue.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSystemTrayIcon;
class QTreeWidget;

namespace sinter::gui {

class QueueRunner;
class QueueStore;
class TrainingTab;

class QueuePanel : public QWidget {
  Q_OBJECT
 public:
  // `currentTab` gives the tab whose settings "Add current config to queue" takes (null: none).
  // `folder`: where the queue lives (QueueStore::defaultFolder() for the app).
  QueuePanel(std::vector<TrainingTab*> tabs, std::function<TrainingTab*()> currentTab, const QString& folder,
             QWidget* parent = nullptr);
  ~QueuePanel() override;

  // Snapshots the current tab's settings as a new pending entry; false (reported) when refused.
  bool addCurrentConfig();

  QueueStore* store() const { return store_; }
  QueueRunner* runner() const { return runner_; }
  QTreeWidget* list() const { return list_; }
  QPushButton* addButton() const { return add_; }
  QPushButton* upButton() const { return up_; }
  QPushButton* downButton() const { return down_; }
  QPushButton* removeButton() const { return remove_; }
  QPushButton* resumeButton() const { return resume_; }
  QPushButton* runAgainButton() const { return again_; }
  QPushButton* startButton() const { return start_; }
  QPushButton* stopButton() const { return stop_; }
  QComboBox* onFailureBox() const { return onFailure_; }
  QLineEdit* endCommandEdit() const { return endCommand_; }
  QString statusText() const;
  static QString statusName(QueueStatus status);

 signals:
  void queueEnded(const QString& summary);

 private:
  void refresh();
  void updateButtons();
  int selectedRow() const;
  void select(int row);
  void report(const QString& text, bool problem = false);
  void moveSelected(int delta);
  void removeSelected();
  void resumeSelected();
  void runSelectedAgain();
  void setEndCommand();
  void onQueueEnded(const QString& summary);
  void notify(const QString& text);
  void runEndCommand();

  std::vector<TrainingTab*> tabs_;
  std::function<TrainingTab*()> currentTab_;
  QueueStore* store_;
  QueueRunner* runner_;
  QTreeWidget* list_;
  QPushButton* add_;
  QPushButton* up_;
  QPushButton* down_;
  QPushButton* remove_;
  QPushButton* resume_;
  QPushButton* again_;
  QPushButton* start_;
  QPushButton* stop_;
  QComboBox* onFailure_;
  QLineEdit* endCommand_;
  QLabel* status_;
  QSystemTrayIcon* tray_ = nullptr;
};

}  // namespace sinter::gui

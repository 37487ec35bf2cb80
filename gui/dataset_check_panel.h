#pragma once
// The dataset check's report (the runner's `dataset_check` event, issue 57): what would stop a run,
// images without captions, empty captions, files of the same content, images smaller than the
// smallest bucket, files that cannot be read, each folder's repeats and the bucket histogram. It
// shows the report a run sends at its start, and runs `sinter-runner --check_dataset` itself (with
// an argument list, through a RunController) for a check before the start.
#include <QStringList>
#include <QWidget>

#include "core/events.h"

class QLabel;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace sinter::gui {

class LogView;
class RunController;

class DatasetCheckPanel : public QWidget {
  Q_OBJECT
 public:
  explicit DatasetCheckPanel(QWidget* parent = nullptr);

  // Starts the runner's check; what it says replaces the report shown.
  void startCheck(const QString& program, const QStringList& arguments, const QString& workingDir);
  bool isChecking() const;
  // A report from elsewhere (a run's start): shown without the log of an earlier check.
  void showReport(const events::DatasetCheck& report);
  void clear();

  // For tests: the summary line, the findings as shown (section title, then "  file: why" lines),
  // and the runner's log of the last check.
  QString summaryText() const;
  QString reportText() const;
  QTreeWidget* tree() const { return tree_; }
  LogView* log() const { return log_; }
  RunController* controller() const { return controller_; }
  QPushButton* checkAgainButton() const { return again_; }

 signals:
  // "Check again": the owner writes the config as it is now and calls startCheck.
  void checkRequested();
  void checkFinished(int exitCode);

 private:
  void onEvent(const events::Event& event);
  void fillReport(const events::DatasetCheck& report);
  void onFinished(int exitCode, bool crashed);
  QTreeWidgetItem* addSection(const QString& title, int count);
  void addFiles(const QString& title, const std::vector<events::DatasetFile>& files);

  QLabel* summary_;
  QTreeWidget* tree_;
  LogView* log_;
  QPushButton* again_;
  RunController* controller_;
  bool reportSeen_ = false;  // the running check sent its report
  QStringList runnerErrors_;  // the running check's error events
};

}  // namespace sinter::gui

#pragma once
// A tab's run area: Start, Stop (graceful, then Force stop), the controls during a run (Sample now,
// Save now, Stop after this epoch, Pause/Resume: commands on the runner's stdin, acknowledged by
// its `control` events), Print command, the progress monitor, the live log, the loss chart and the
// sample images. It runs one process at a time.
#include <QStringList>
#include <QWidget>

#include "core/events.h"

class QPushButton;
class QSpinBox;
class QSplitter;

namespace sinter::gui {

class LogView;
class LossChart;
class RunController;
class RunMonitor;
class SampleGallery;

class RunPanel : public QWidget {
  Q_OBJECT
 public:
  explicit RunPanel(QWidget* parent = nullptr);
  void startProcess(const QString& program, const QStringList& args, const QString& workingDir);
  bool isRunning() const;
  void requestStop();
  void forceStop();

  RunController* controller() const { return controller_; }
  RunMonitor* monitor() const { return monitor_; }
  LogView* logView() const { return log_; }
  LossChart* lossChart() const { return chart_; }
  SampleGallery* sampleGallery() const { return gallery_; }
  QPushButton* startButton() const { return start_; }
  QPushButton* stopButton() const { return stop_; }
  QPushButton* forceStopButton() const { return force_; }
  QPushButton* sampleNowButton() const { return sampleNow_; }
  QPushButton* saveNowButton() const { return saveNow_; }
  QPushButton* stopAfterEpochButton() const { return stopAfterEpoch_; }
  QPushButton* pauseButton() const { return pause_; }  // "Pause", or "Resume" while paused
  // The runner's options for the controls (`--control stdin`): every run the app starts reads them.
  static QStringList controlArguments();
  QSpinBox* gpuCountBox() const { return gpus_; }
  // The "GPUs" setting: the runner's launch options for it (--nproc_per_node N when N > 1, one
  // process per GPU, data parallel; none for one GPU).
  QStringList launchArguments() const;

 signals:
  void startRequested();
  void printCommandRequested();
  void runningChanged(bool running);

 private:
  void onEvent(const events::Event& event);
  void onFinished(int exitCode, bool crashed);
  void setRunning(bool running);
  // Sends a control command and says in the log that it waits for the next step boundary.
  void sendControl(const char* command, const QString& asked);
  void togglePause();
  void showPauseAs(bool paused);  // the button offers Resume while paused (or pausing), else Pause

  RunController* controller_;
  RunMonitor* monitor_;
  LogView* log_;
  LossChart* chart_;
  SampleGallery* gallery_;
  QSplitter* views_;
  QPushButton* start_;
  QPushButton* stop_;
  QPushButton* force_;
  QPushButton* sampleNow_;
  QPushButton* saveNow_;
  QPushButton* stopAfterEpoch_;
  QPushButton* pause_;
  bool pauseShown_ = false;  // the pause button offers Resume
  QPushButton* print_;
  QSpinBox* gpus_;
};

}  // namespace sinter::gui

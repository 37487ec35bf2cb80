#pragma once
// The run's progress at a glance, driven by the runner's events: phase (preparing, warm-up,
// training), a progress bar with step/total, epoch, it/s, ETA, and the final status.
#include <QWidget>

#include "core/events.h"

class QLabel;
class QProgressBar;

namespace sinter::gui {

class RunMonitor : public QWidget {
  Q_OBJECT
 public:
  enum class Phase { Idle, Starting, WarmingUp, Training, Finished };
  explicit RunMonitor(QWidget* parent = nullptr);

  void reset();  // a new run begins
  void handleEvent(const events::Event& event);
  void noteLogLine(const QString& line);  // the last stderr line explains a failure without an error event
  // The process ended; `forced` when the user killed it.
  void handleFinished(int exitCode, bool crashed, bool forced);
  void handleFailedToStart(const QString& message);

  Phase phase() const { return phase_; }
  QString finalStatus() const { return finalStatus_; }  // completed | stopped | failed
  QString statusText() const;
  QProgressBar* progressBar() const { return progress_; }
  double warmupSeconds() const { return warmupSeconds_; }
  long long lastStep() const { return lastStep_; }

 private:
  void setPhase(Phase phase, const QString& text);
  void hideEmptyLabels();

  QProgressBar* progress_;
  QLabel* phaseLabel_;
  QLabel* epochLabel_;
  QLabel* speedLabel_;
  QLabel* etaLabel_;
  QLabel* statusLabel_;
  Phase phase_ = Phase::Idle;
  QString finalStatus_;
  QString doneStatus_;  // from the done event
  QString lastError_;
  QString lastLogLine_;
  double warmupSeconds_ = 0;
  long long totalSteps_ = 0, totalEpochs_ = 0, lastStep_ = 0;
};

QString formatDuration(double seconds);

}  // namespace sinter::gui

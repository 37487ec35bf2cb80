#pragma once
// The run's progress at a glance, driven by the runner's events: phase (preparing, warm-up,
// training, paused), a progress bar with step/total, epoch, it/s, ETA, the acknowledgements of the
// controls during the run, and the final status.
// Step events are coalesced: the bar and labels show the latest step at most kStepDisplayMs apart
// (a tiny model writes hundreds of steps a second; each label change relays out the window).
#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>
#include <optional>

#include "core/events.h"

class QLabel;
class QProgressBar;

namespace sinter::gui {

class RunMonitor : public QWidget {
  Q_OBJECT
 public:
  enum class Phase { Idle, Starting, WarmingUp, Training, Paused, Finished };
  static constexpr int kStepDisplayMs = 250;
  explicit RunMonitor(QWidget* parent = nullptr);

  void reset();  // a new run begins
  void handleEvent(const events::Event& event);
  void noteLogLine(const QString& line);  // the last stderr line explains a failure without an error event
  // The process ended; `forced` when the user killed it.
  void handleFinished(int exitCode, bool crashed, bool forced);
  void handleFailedToStart(const QString& message);

  Phase phase() const { return phase_; }
  bool isPaused() const { return phase_ == Phase::Paused; }
  QString finalStatus() const { return finalStatus_; }  // completed | stopped | failed
  QString statusText() const;
  QProgressBar* progressBar() const { return progress_; }
  double warmupSeconds() const { return warmupSeconds_; }
  long long lastStep() const { return lastStep_; }
  // Shows the latest step now (also done by a timer, and before any other event or the end).
  void showPendingStep();

 signals:
  // Something the user should read in the log (a runner's report the monitor did not believe).
  void notice(const QString& text);

 private:
  void setPhase(Phase phase, const QString& text);
  void hideEmptyLabels();
  void setProgress(long long step, long long total);
  void handleStep(const events::Step& step);
  void handleDone(const events::Done& done);
  void handleControl(const events::Control& control);

  QProgressBar* progress_;
  QLabel* phaseLabel_;
  QLabel* epochLabel_;
  QLabel* speedLabel_;
  QLabel* etaLabel_;
  QLabel* statusLabel_;
  Phase phase_ = Phase::Idle;
  QString finalStatus_;
  QString doneStatus_;  // from the done event
  QString earlyStop_;   // the done event's why, when early_stop_patience ended the run
  QString lastError_;
  QString lastLogLine_;
  double warmupSeconds_ = 0;
  long long totalSteps_ = 0, totalEpochs_ = 0, lastStep_ = 0;
  std::optional<events::Step> pendingStep_;  // the latest step not shown yet
  QTimer stepTimer_;
  QElapsedTimer sinceStepShown_;
};

QString formatDuration(double seconds);

}  // namespace sinter::gui

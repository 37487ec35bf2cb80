#include "run_monitor.h"

#include <QGridLayout>
#include <QLabel>
#include <QProgressBar>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/exit_codes.h"
#include "run_control_text.h"

namespace sinter::gui {

namespace {
// The runner's own words in the status line, at most a few lines' worth: a word-wrapped label of
// tens of kilobytes would stall every relayout of the window.
QString clipped(const QString& text, int maxChars = 500) {
  return text.size() > maxChars ? text.left(maxChars - 1) + QChar(0x2026) : text;
}
QString clipped(const std::string& text) { return clipped(QString::fromStdString(text)); }
}  // namespace

QString formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("–");
  const long long s = std::llround(seconds);
  if (s >= 3600) return QStringLiteral("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'));
  return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

RunMonitor::RunMonitor(QWidget* parent) : QWidget(parent) {
  progress_ = new QProgressBar(this);
  progress_->setObjectName(QStringLiteral("runProgress"));
  progress_->setTextVisible(true);
  phaseLabel_ = new QLabel(this);
  phaseLabel_->setObjectName(QStringLiteral("runPhase"));
  epochLabel_ = new QLabel(this);
  speedLabel_ = new QLabel(this);
  etaLabel_ = new QLabel(this);
  statusLabel_ = new QLabel(this);
  statusLabel_->setObjectName(QStringLiteral("runStatus"));
  statusLabel_->setWordWrap(true);
  statusLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* layout = new QGridLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(phaseLabel_, 0, 0);
  layout->addWidget(progress_, 0, 1, 1, 3);
  layout->addWidget(epochLabel_, 1, 1);
  layout->addWidget(speedLabel_, 1, 2);
  layout->addWidget(etaLabel_, 1, 3);
  layout->addWidget(statusLabel_, 2, 0, 1, 4);
  layout->setColumnStretch(1, 1);
  layout->setColumnStretch(2, 1);
  layout->setColumnStretch(3, 1);
  stepTimer_.setSingleShot(true);
  connect(&stepTimer_, &QTimer::timeout, this, &RunMonitor::showPendingStep);
  reset();
  setPhase(Phase::Idle, tr("Idle"));
  progress_->setFormat(QString());
}

void RunMonitor::reset() {
  phase_ = Phase::Starting;
  finalStatus_.clear();
  doneStatus_.clear();
  earlyStop_.clear();
  lastError_.clear();
  lastLogLine_.clear();
  warmupSeconds_ = 0;
  totalSteps_ = totalEpochs_ = lastStep_ = 0;
  pendingStep_.reset();
  stepTimer_.stop();
  sinceStepShown_.invalidate();
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setFormat(tr("%v / %m steps"));
  epochLabel_->clear();
  speedLabel_->clear();
  etaLabel_->clear();
  statusLabel_->clear();
  statusLabel_->setStyleSheet(QString());
  setPhase(Phase::Starting, tr("Starting…"));
  hideEmptyLabels();
}

void RunMonitor::hideEmptyLabels() {
  for (QLabel* label : {epochLabel_, speedLabel_, etaLabel_, statusLabel_}) label->setVisible(!label->text().isEmpty());
}

void RunMonitor::setPhase(Phase phase, const QString& text) {
  phase_ = phase;
  phaseLabel_->setText(text);
}

void RunMonitor::setProgress(long long step, long long total) {
  total = std::max<long long>(1, total);
  step = std::clamp<long long>(step, 0, total);
  if (total <= std::numeric_limits<int>::max()) {
    progress_->setRange(0, static_cast<int>(total));
    progress_->setValue(static_cast<int>(step));
    progress_->setFormat(tr("%v / %m steps"));
  } else {
    // QProgressBar counts in int: a longer run is drawn in millionths and its text says the steps.
    constexpr int kScale = 1000000;
    progress_->setRange(0, kScale);
    progress_->setValue(static_cast<int>(static_cast<double>(step) / static_cast<double>(total) * kScale));
    progress_->setFormat(tr("%1 / %2 steps").arg(step).arg(total));
  }
}

void RunMonitor::handleStep(const events::Step& step) {
  if (phase_ != Phase::Training) {
    setPhase(Phase::Training, tr("Training"));
    if (warmupSeconds_ > 0) statusLabel_->setText(tr("Warm-up took %1 s").arg(warmupSeconds_, 0, 'f', 1));
    hideEmptyLabels();
  }
  if (step.total > 0) totalSteps_ = step.total;
  lastStep_ = step.step;
  pendingStep_ = step;
  if (stepTimer_.isActive()) return;
  const qint64 since = sinceStepShown_.isValid() ? sinceStepShown_.elapsed() : kStepDisplayMs;
  if (since >= kStepDisplayMs)
    showPendingStep();
  else
    stepTimer_.start(static_cast<int>(kStepDisplayMs - since));
}

void RunMonitor::showPendingStep() {
  stepTimer_.stop();
  if (!pendingStep_) return;
  const events::Step step = *pendingStep_;
  pendingStep_.reset();
  sinceStepShown_.start();
  setProgress(step.step, totalSteps_);
  epochLabel_->setText(totalEpochs_ > 0 ? tr("Epoch %1 / %2").arg(step.epoch).arg(totalEpochs_)
                                        : tr("Epoch %1").arg(step.epoch));
  speedLabel_->setText(step.it_per_s >= 1 || step.it_per_s == 0 ? tr("%1 it/s").arg(step.it_per_s, 0, 'f', 2)
                                                                 : tr("%1 s/it").arg(1.0 / step.it_per_s, 0, 'f', 2));
  etaLabel_->setText(tr("ETA %1").arg(formatDuration(step.eta_s)));
  hideEmptyLabels();
}

void RunMonitor::handleDone(const events::Done& done) {
  doneStatus_ = QString::fromStdString(done.status);
  if (done.reason == "early_stop") earlyStop_ = clipped(done.message.empty() ? done.reason : done.message);
  // The count is believed when it fits the run: between 0 and its total (or, with no total known,
  // the last step an event showed). A hostile or broken runner's count is reported, not shown.
  const long long limit = totalSteps_ > 0 ? totalSteps_ : lastStep_;
  if (done.steps >= 0 && done.steps <= std::max(limit, lastStep_)) {
    lastStep_ = std::max(lastStep_, done.steps);
  } else if (totalSteps_ > 0) {
    emit notice(tr("The runner's done event counts %1 steps, not between 0 and the run's %2; the last step seen, %3, is shown.")
                    .arg(done.steps)
                    .arg(totalSteps_)
                    .arg(lastStep_));
  } else {
    emit notice(tr("The runner's done event counts %1 steps, which no step event showed; the last step seen, %2, is shown.")
                    .arg(done.steps)
                    .arg(lastStep_));
  }
}

void RunMonitor::handleControl(const events::Control& control) {
  statusLabel_->setText(clipped(controlAcknowledgement(control)));
  if (control.result != "done") return;
  if (control.command == control_words::kPause) setPhase(Phase::Paused, tr("Paused"));
  if (control.command == control_words::kResume && phase_ == Phase::Paused) setPhase(Phase::Training, tr("Training"));
}

void RunMonitor::handleEvent(const events::Event& event) {
  using namespace events;
  if (const auto* step = std::get_if<Step>(&event)) {
    handleStep(*step);
    return;
  }
  showPendingStep();  // what came before this event is shown before it
  if (const auto* start = std::get_if<Start>(&event)) {
    totalSteps_ = start->total_steps;
    totalEpochs_ = start->epochs;
    setProgress(0, totalSteps_);
    QString status = tr("%1 on %2, %3 steps").arg(QString::fromStdString(start->training_mode), QString::fromStdString(start->device))
                         .arg(totalSteps_);
    // The dataset's totals; the skipped files are named in the log's warnings.
    if (start->images > 0)
      status += start->skipped > 0 ? tr(", %1 images, %2 skipped").arg(start->images).arg(start->skipped)
                                   : tr(", %1 images").arg(start->images);
    statusLabel_->setText(status);
    setPhase(Phase::Starting, tr("Preparing"));
  } else if (const auto* plan = std::get_if<CompilePlan>(&event)) {
    if (plan->enabled && phase_ != Phase::Training) {
      setPhase(Phase::WarmingUp, tr("Warm-up"));
      progress_->setRange(0, 0);  // busy: capture time is not training time
    }
  } else if (const auto* warmup = std::get_if<Warmup>(&event)) {
    warmupSeconds_ += warmup->seconds;
    if (phase_ != Phase::Training) {
      setPhase(Phase::WarmingUp, tr("Warm-up"));
      progress_->setRange(0, 0);
    }
    statusLabel_->setText(tr("Warm-up: %1 captured in %2 s (total %3 s)")
                              .arg(clipped(warmup->signature))
                              .arg(warmup->seconds, 0, 'f', 1)
                              .arg(warmupSeconds_, 0, 'f', 1));
  } else if (const auto* epoch = std::get_if<Epoch>(&event)) {
    epochLabel_->setText(tr("Epoch %1 / %2 done, average loss %3")
                             .arg(epoch->epoch)
                             .arg(epoch->epochs)
                             .arg(epoch->avg_loss, 0, 'g', 4));
  } else if (const auto* saved = std::get_if<Saved>(&event)) {
    statusLabel_->setText(tr("Saved %1: %2").arg(clipped(saved->kind), clipped(saved->path)));
  } else if (const auto* error = std::get_if<Error>(&event)) {
    lastError_ = clipped(error->message);
  } else if (const auto* done = std::get_if<Done>(&event)) {
    handleDone(*done);
  } else if (const auto* control = std::get_if<Control>(&event)) {
    handleControl(*control);
  }
  // Step is handled above; Warning, Sample and Unknown events change nothing here (warnings reach the log).
  hideEmptyLabels();
}

void RunMonitor::noteLogLine(const QString& line) {
  if (!line.trimmed().isEmpty()) lastLogLine_ = clipped(line.trimmed());
}

void RunMonitor::handleFinished(int exitCode, bool crashed, bool forced) {
  showPendingStep();
  if (progress_->maximum() == 0) progress_->setRange(0, 1);
  QString text;
  if (forced) {
    finalStatus_ = QStringLiteral("stopped");
    text = tr("Force-stopped: the runner was killed; the last saved state is what remains.");
  } else if (!crashed && exitCode == kExitOk && doneStatus_ == QLatin1String("stopped")) {
    finalStatus_ = QStringLiteral("stopped");
    text = tr("Stopped at step %1; the network and training state were saved.").arg(lastStep_);
  } else if (!crashed && exitCode == kExitOk && doneStatus_ != QLatin1String("failed")) {
    finalStatus_ = QStringLiteral("completed");
    text = earlyStop_.isEmpty() ? tr("Completed: %1 steps.").arg(lastStep_)
                                : tr("Completed: stopped early at step %1: %2.").arg(lastStep_).arg(earlyStop_);
    progress_->setValue(progress_->maximum());
  } else {
    finalStatus_ = QStringLiteral("failed");
    const QString reason = !lastError_.isEmpty() ? lastError_ : lastLogLine_;
    text = crashed ? tr("Failed: the runner crashed.") : tr("Failed with exit code %1.").arg(exitCode);
    if (exitCode == kExitBadInput && !crashed) text += QLatin1Char(' ') + tr("The configuration was refused; nothing was trained.");
    if (!reason.isEmpty()) text += QLatin1Char('\n') + reason;
  }
  setPhase(Phase::Finished, finalStatus_ == QLatin1String("completed") ? tr("Completed")
                            : finalStatus_ == QLatin1String("stopped") ? tr("Stopped")
                                                                       : tr("Failed"));
  statusLabel_->setText(text);
  statusLabel_->setStyleSheet(finalStatus_ == QLatin1String("failed") ? QStringLiteral("color:#c02020;") : QString());
  hideEmptyLabels();
}

void RunMonitor::handleFailedToStart(const QString& message) {
  finalStatus_ = QStringLiteral("failed");
  setPhase(Phase::Finished, tr("Failed"));
  if (progress_->maximum() == 0) progress_->setRange(0, 1);
  statusLabel_->setText(message);
  statusLabel_->setStyleSheet(QStringLiteral("color:#c02020;"));
  hideEmptyLabels();
}

QString RunMonitor::statusText() const { return statusLabel_->text(); }

}  // namespace sinter::gui

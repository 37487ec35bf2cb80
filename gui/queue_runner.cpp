#include "queue_runner.h"

#include <QDir>
#include <QTimer>

#include "log_view.h"
#include "queue_store.h"
#include "run_controller.h"
#include "run_monitor.h"
#include "run_panel.h"
#include "training_tab.h"

namespace sinter::gui {

namespace {
constexpr int kMessageLimit = 400;  // a run's outcome in the queue file: its gist, not its log

QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

QueueRunner::QueueRunner(QueueStore* store, std::vector<TrainingTab*> tabs, QObject* parent)
    : QObject(parent), store_(store), tabs_(std::move(tabs)) {}

void QueueRunner::start() {
  if (running_ || !store_->isUsable()) return;
  if (!nextPendingRun(store_->queue())) {
    emit message(tr("Nothing to run: no entry of the queue is pending."));
    return;
  }
  running_ = true;
  stopping_ = false;
  emit runningChanged(true);
  startNext();
}

void QueueRunner::stop() {
  if (!running_) return;
  stopping_ = true;
  if (!currentTab_) {  // between runs, or waiting for a tab
    end(false);
    return;
  }
  emit message(tr("Stopping the queue: the run saves, then the queue stops."));
  if (!currentTab_->runPanel()->controller()->stopRequested()) currentTab_->runPanel()->requestStop();
}

void QueueRunner::disconnectRun() {
  for (const auto& c : runConnections_) disconnect(c);
  runConnections_.clear();
}

void QueueRunner::startNext() {
  if (!running_) return;
  const RunQueue& queue = store_->queue();
  const std::optional<std::size_t> next = nextPendingRun(queue);
  if (!next) {
    end(true);
    return;
  }
  const std::size_t index = *next;
  const QueueEntry entry = queue.entries[index];
  const QueueEntryInfo info = store_->info(index);
  TrainingTab* tab = nullptr;
  for (TrainingTab* t : tabs_)
    if (info.tab && t->tab() == *info.tab) tab = t;
  if (!tab) {
    setStatus(entry.config, QueueStatus::Failed,
              info.error.isEmpty() ? tr("The snapshot names no training type.") : tr("The snapshot cannot be read: %1").arg(info.error));
    if (store_->queue().onFailure == QueueOnFailure::Stop) end(true);
    else QTimer::singleShot(0, this, &QueueRunner::startNext);
    return;
  }
  if (tab->isRunning()) {
    // A run the user started in that tab: the entry waits for it to end.
    emit message(tr("Waiting for the run in the %1 tab to end.").arg(tab->title()));
    runConnections_.push_back(connect(tab, &TrainingTab::runningChanged, this, [this](bool running) {
      if (running) return;
      disconnectRun();
      QTimer::singleShot(0, this, &QueueRunner::startNext);
    }));
    return;
  }
  QStringList arguments;
  if (!entry.outputDir.empty()) arguments << QStringLiteral("--output_dir") << q(entry.outputDir);
  if (!entry.resume.empty()) arguments << QStringLiteral("--resume") << q(entry.resume);
  const QString workingDir = entry.workingDir.empty() ? QDir::currentPath() : q(resolveQueuePath(store_->filePath().toStdString(), entry.workingDir));
  current_ = entry.config;
  currentTab_ = tab;
  setStatus(entry.config, QueueStatus::Running, QString());
  RunController* controller = tab->runPanel()->controller();
  runConnections_.push_back(connect(controller, &RunController::finished, this, [this, tab] { onRunFinished(tab); }));
  runConnections_.push_back(connect(controller, &RunController::failedToStart, this, [this](const QString& why) {
    disconnectRun();
    finishRun(QueueStatus::Failed, why);
  }));
  const int position = static_cast<int>(index) + 1, count = static_cast<int>(queue.entries.size());
  tab->startQueuedRun(store_->configPath(index), arguments, workingDir);
  if (!current_.empty()) {  // still this entry's run (it did not fail to start)
    tab->runPanel()->logView()->appendLine(tr("Queue: run %1 of %2 (%3).").arg(position).arg(count).arg(store_->configPath(index)));
    emit message(tr("Running %1 of %2 in the %3 tab.").arg(position).arg(count).arg(tab->title()));
  }
}

void QueueRunner::onRunFinished(TrainingTab* tab) {
  disconnectRun();
  RunMonitor* monitor = tab->runPanel()->monitor();
  const QString outcome = monitor->finalStatus();
  QString text = monitor->statusText().simplified();
  if (text.size() > kMessageLimit) text = text.left(kMessageLimit) + QStringLiteral("…");
  if (outcome == QLatin1String("completed")) finishRun(QueueStatus::Done, text);
  else if (outcome == QLatin1String("stopped")) finishRun(QueueStatus::Interrupted, text);
  else finishRun(QueueStatus::Failed, text);
}

void QueueRunner::finishRun(QueueStatus status, const QString& text) {
  const std::string config = current_;
  current_.clear();
  currentTab_ = nullptr;
  setStatus(config, status, text);
  if (!running_) return;
  if (stopping_) {
    end(false);
    return;
  }
  if (status == QueueStatus::Failed && store_->queue().onFailure == QueueOnFailure::Stop) {
    emit message(tr("A run failed and the queue stops there (on failure: stop the queue)."));
    end(true);
    return;
  }
  // The next run after the event loop has turned: the finished run's panel settles first.
  QTimer::singleShot(0, this, &QueueRunner::startNext);
}

void QueueRunner::setStatus(const std::string& config, QueueStatus status, const QString& text) {
  for (QueueEntry& entry : store_->queue().entries) {
    if (entry.config != config) continue;
    entry.status = status;
    entry.message = text.toStdString();
    break;
  }
  QString error;
  if (!store_->save(&error)) emit message(error);
  emit changed();
}

void QueueRunner::end(bool byItself) {
  disconnectRun();
  running_ = false;
  stopping_ = false;
  current_.clear();
  currentTab_ = nullptr;
  emit runningChanged(false);
  if (byItself) emit ended(summary());
  else emit message(tr("The queue stopped; the runs left are pending."));
}

QString QueueRunner::summary() const {
  int counts[5] = {0, 0, 0, 0, 0};
  for (const QueueEntry& entry : store_->queue().entries) ++counts[static_cast<int>(entry.status)];
  return tr("The queue has ended: %1 done, %2 failed, %3 interrupted, %4 pending.")
      .arg(counts[static_cast<int>(QueueStatus::Done)])
      .arg(counts[static_cast<int>(QueueStatus::Failed)])
      .arg(counts[static_cast<int>(QueueStatus::Interrupted)])
      .arg(counts[static_cast<int>(QueueStatus::Pending)]);
}

}  // namespace sinter::gui

#pragma once
// Runs the app's queue (queue_store.h): its pending entries one at a time, each in the tab its
// snapshot's training_type names, through that tab's run panel (the path Start takes), so its log,
// progress, loss and samples show there. An entry's status follows its run: done, failed (the
// queue goes on or stops, per on_failure), or interrupted when it was stopped; Stop queue (and
// the window closing) stops the run and the queue, a Stop of that run alone goes on with the next.
#include <QMetaObject>
#include <QObject>
#include <QString>
#include <vector>

#include "core/run_queue.h"

namespace sinter::gui {

class QueueStore;
class TrainingTab;

class QueueRunner : public QObject {
  Q_OBJECT
 public:
  QueueRunner(QueueStore* store, std::vector<TrainingTab*> tabs, QObject* parent = nullptr);
  void start();
  // Stops the queue: the run going on is asked to stop (it saves; its entry becomes interrupted).
  void stop();
  bool isRunning() const { return running_; }
  // The config (as the queue file names it) of the entry whose run is going on, or empty.
  const std::string& currentConfig() const { return current_; }

 signals:
  void changed();                      // an entry's status changed (and the queue was saved)
  void message(const QString& text);   // what the queue did, for the panel's status line
  // The queue ran out of pending entries, or stopped for a failure (on_failure = "stop").
  void ended(const QString& summary);
  void runningChanged(bool running);

 private:
  void startNext();
  void finishRun(QueueStatus status, const QString& message);
  void onRunFinished(TrainingTab* tab);
  void setStatus(const std::string& config, QueueStatus status, const QString& message);
  void end(bool byItself);
  void disconnectRun();
  QString summary() const;

  QueueStore* store_;
  std::vector<TrainingTab*> tabs_;
  bool running_ = false;
  bool stopping_ = false;       // the queue's own stop: the stopped run ends the queue
  std::string current_;         // the running entry's config
  TrainingTab* currentTab_ = nullptr;  // the tab running it
  std::vector<QMetaObject::Connection> runConnections_;
};

}  // namespace sinter::gui

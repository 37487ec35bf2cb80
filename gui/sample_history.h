#pragma once
// The sample images of this app session's runs, as their `sample` events reported them: one list
// per run, newest run last. The gallery shows it; tests feed it.
#include <QDateTime>
#include <QString>
#include <QVector>

#include "core/events.h"

namespace sinter::gui {

struct SampleRun {
  QDateTime started;
  QVector<events::Sample> samples;  // in the order they were made
};

class SampleHistory {
 public:
  // A run began (its `start` event): later samples belong to it.
  void startRun(const QDateTime& when);
  // A sample of the current run (a run is started for it if none was).
  void add(const events::Sample& sample);
  const QVector<SampleRun>& runs() const { return runs_; }

 private:
  QVector<SampleRun> runs_;
};

}  // namespace sinter::gui

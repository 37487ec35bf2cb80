#include "sample_history.h"

namespace sinter::gui {

void SampleHistory::startRun(const QDateTime& when) { runs_.push_back(SampleRun{when, {}}); }

void SampleHistory::add(const events::Sample& sample) {
  if (runs_.isEmpty()) startRun(QDateTime::currentDateTime());
  runs_.back().samples.push_back(sample);
}

}  // namespace sinter::gui

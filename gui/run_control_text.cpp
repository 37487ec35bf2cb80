#include "run_control_text.h"

#include <QCoreApplication>

namespace sinter::gui {

namespace {

// Gives lupdate and translate() the context "RunControlText" for the functions below.
struct RunControlText {
  Q_DECLARE_TR_FUNCTIONS(RunControlText)
};

}  // namespace

QString controlCommandLabel(const std::string& command) {
  using namespace control_words;
  if (command == kSample) return RunControlText::tr("Sample now");
  if (command == kSave) return RunControlText::tr("Save now");
  if (command == kStopAfterEpoch) return RunControlText::tr("Stop after this epoch");
  if (command == kPause) return RunControlText::tr("Pause");
  if (command == kResume) return RunControlText::tr("Resume");
  return QString::fromStdString(command);
}

QString controlAcknowledgement(const events::Control& c) {
  using namespace control_words;
  const QString label = controlCommandLabel(c.command);
  const QString details = QString::fromStdString(c.message);
  if (c.result == "ignored") return RunControlText::tr("%1 at step %2: nothing to do (%3)").arg(label).arg(c.step).arg(details);
  if (c.command == kStopAfterEpoch)
    return c.result == "pending" ? RunControlText::tr("%1: the run ends after epoch %2, saved as at its end.").arg(label).arg(c.epoch)
                                 : RunControlText::tr("%1: the run ended after epoch %2 as asked.").arg(label).arg(c.epoch);
  if (c.command == kSample) return RunControlText::tr("%1: sample images made at step %2.").arg(label).arg(c.step);
  if (c.command == kSave) return RunControlText::tr("%1: saved at step %2.").arg(label).arg(c.step);
  if (c.command == kPause) return RunControlText::tr("Paused after step %1; the model stays loaded.").arg(c.step);
  if (c.command == kResume) return RunControlText::tr("Resumed at step %1 after a pause of %2 s.").arg(c.step).arg(c.seconds, 0, 'f', 1);
  return RunControlText::tr("%1 at step %2: %3").arg(label).arg(c.step).arg(details);
}

}  // namespace sinter::gui

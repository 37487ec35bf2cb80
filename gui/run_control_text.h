#pragma once
// The words the app shows for the run's controls (Sample now, Save now, Stop after this epoch,
// Pause, Resume) and for the runner's acknowledgements of them (`control` events), in the log
// and the status line alike.
#include <QString>

#include "core/events.h"

namespace sinter::gui {

// The runner's command words as they are sent on its stdin (`--control stdin`).
namespace control_words {
inline constexpr const char* kSample = "sample";
inline constexpr const char* kSave = "save";
inline constexpr const char* kStopAfterEpoch = "stop_after_epoch";
inline constexpr const char* kPause = "pause";
inline constexpr const char* kResume = "resume";
}  // namespace control_words

// "Sample now" for "sample", ...; the word itself for one the app does not know.
QString controlCommandLabel(const std::string& command);
// One line saying what the runner did: "Save now at step 12: done (saved at step 12)".
QString controlAcknowledgement(const events::Control& control);

}  // namespace sinter::gui

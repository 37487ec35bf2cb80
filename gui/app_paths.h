#pragma once
// Where the app finds the runner, the shipped presets and the user's presets.
#include <QString>
#include <QStringList>

class QIcon;

namespace sinter::gui {

// The runner set in preferences, else `sinter-runner` beside the app's own binary.
QString runnerPath();
void setRunnerPathPreference(const QString& path);  // empty: back to the default
QString defaultRunnerPath();
// The application icon (SVG, with a PNG for systems without the SVG image plugin).
QIcon appIcon();

// Folders holding shipped presets, first the installed one, then the source tree's (build runs).
QStringList shippedPresetDirs();
// The user's own presets (created on demand).
QString userPresetDir();

}  // namespace sinter::gui

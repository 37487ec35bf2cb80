#pragma once
// Installs the app's translation (and Qt's own, for standard dialog buttons) for a language.
#include <QString>

class QCoreApplication;

namespace sinter::gui {

// `language` like "ja" or "zh_CN"; empty: the system locale. Returns the language installed, or ""
// when the app's strings stay English.
QString installTranslations(QCoreApplication& app, const QString& language);

}  // namespace sinter::gui

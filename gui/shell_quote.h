#pragma once
// Quoting for text the user copies into a POSIX shell or a list field (never executed by us).
#include <QString>
#include <QStringList>

namespace sinter::gui {

// An argument quoted for a POSIX shell: unchanged when it holds only safe characters.
QString shellQuote(const QString& arg);
QString shellCommandLine(const QString& program, const QStringList& args);
// Items joined with spaces, double-quoted where QProcess::splitCommand needs it to read them back.
QString joinQuoted(const QStringList& items);

}  // namespace sinter::gui

#include "shell_quote.h"

#include <QRegularExpression>

namespace sinter::gui {

QString shellQuote(const QString& arg) {
  static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9_./=:,+@%-]+$"));
  if (safe.match(arg).hasMatch()) return arg;
  QString quoted = arg;
  quoted.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
  return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

QString shellCommandLine(const QString& program, const QStringList& args) {
  QStringList parts{shellQuote(program)};
  for (const QString& a : args) parts << shellQuote(a);
  return parts.join(QLatin1Char(' '));
}

QString joinQuoted(const QStringList& items) {
  QStringList parts;
  for (QString item : items) {
    if (item.isEmpty() || item.contains(QLatin1Char(' ')) || item.contains(QLatin1Char('"')) ||
        item.contains(QLatin1Char('\t'))) {
      // QProcess::splitCommand reads three double quotes inside a quoted item as one literal quote.
      item.replace(QLatin1Char('"'), QStringLiteral("\"\"\""));
      item = QLatin1Char('"') + item + QLatin1Char('"');
    }
    parts << item;
  }
  return parts.join(QLatin1Char(' '));
}

}  // namespace sinter::gui

#include "recent_files.h"

#include <QFileInfo>
#include <QSettings>

namespace sinter::gui {

namespace {
const char* const kKey = "recentFiles";
}

QStringList RecentFiles::list() {
  QStringList out;
  for (const QString& path : QSettings().value(kKey).toStringList())
    if (QFileInfo::exists(path)) out << path;
  return out;
}

void RecentFiles::add(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  QStringList paths = QSettings().value(kKey).toStringList();
  paths.removeAll(absolute);
  paths.prepend(absolute);
  while (paths.size() > kMaximum) paths.removeLast();
  QSettings().setValue(kKey, paths);
}

void RecentFiles::clear() { QSettings().remove(kKey); }

}  // namespace sinter::gui

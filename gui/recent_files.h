#pragma once
// The most recently opened or saved config files, kept in the app's settings.
#include <QStringList>

namespace sinter::gui {

class RecentFiles {
 public:
  static constexpr int kMaximum = 10;
  static QStringList list();  // newest first, only files that still exist
  static void add(const QString& path);
  static void clear();
};

}  // namespace sinter::gui

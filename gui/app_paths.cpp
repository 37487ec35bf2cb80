#include "app_paths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QIcon>
#include <QSettings>
#include <QStandardPaths>

namespace sinter::gui {

namespace {
const char* const kRunnerKey = "runner/path";
}

QString defaultRunnerPath() {
  return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("sinter-runner"));
}

QString runnerPath() {
  const QString chosen = QSettings().value(kRunnerKey).toString();
  return chosen.isEmpty() ? defaultRunnerPath() : chosen;
}

void setRunnerPathPreference(const QString& path) {
  QSettings settings;
  if (path.isEmpty())
    settings.remove(kRunnerKey);
  else
    settings.setValue(kRunnerKey, path);
}

QIcon appIcon() {
  QIcon icon(QStringLiteral(":/sinter/sinter.svg"));
  icon.addFile(QStringLiteral(":/sinter/sinter-256.png"), QSize(256, 256));
  return icon;
}

QStringList shippedPresetDirs() {
  QStringList dirs;
  const QDir appDir(QCoreApplication::applicationDirPath());
  const QString installed =
      QDir::cleanPath(appDir.filePath(QStringLiteral("../" SINTER_INSTALL_DATADIR "/sinter/presets")));
  if (QFileInfo(installed).isDir()) dirs << installed;
  const QString source = QStringLiteral(SINTER_SOURCE_PRESETS_DIR);
  // Running from the build tree: the source tree's presets (an installed app uses its own).
  if (dirs.isEmpty() && QFileInfo(source).isDir()) dirs << source;
  return dirs;
}

QString userPresetDir() {
  const QString base = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
  const QString dir = QDir(base).filePath(QStringLiteral("presets"));
  QDir().mkpath(dir);
  return dir;
}

}  // namespace sinter::gui

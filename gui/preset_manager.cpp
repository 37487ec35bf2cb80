#include "preset_manager.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "core/toml_config.h"

namespace sinter::gui {

PresetInfo readPresetInfo(const QString& path, bool user) {
  PresetInfo info;
  info.path = path;
  info.user = user;
  info.title = QFileInfo(path).completeBaseName().replace(QLatin1Char('_'), QLatin1Char(' '));
  // The leading comment describes the preset: its first line is the title, unless the sentence
  // runs on, then the part before the first colon; the whole comment is the description.
  QFile file(path);
  QStringList comment;
  if (file.open(QIODevice::ReadOnly)) {
    while (!file.atEnd()) {
      const QString line = QString::fromUtf8(file.readLine()).trimmed();
      if (!line.startsWith(QLatin1Char('#'))) break;
      comment << line.mid(1).trimmed();
    }
  }
  if (!comment.isEmpty() && !comment.first().isEmpty()) {
    info.title = comment.first();
    const int colon = info.title.indexOf(QLatin1String(": "));
    if (comment.size() > 1 && colon > 0) info.title = info.title.left(colon);
    info.description = comment.join(QLatin1Char(' '));
  }
  try {
    const LoadResult loaded = loadConfigFile(path.toStdString());
    if (loaded.config.has("training_type")) info.tab = loaded.config.tab();
    info.family = loaded.config.family();
  } catch (const ConfigError& e) {
    info.error = QString::fromStdString(formatAll(e.diagnostics()));
  } catch (const std::exception& e) {
    info.error = QString::fromUtf8(e.what());
  }
  return info;
}

PresetManager::PresetManager(QStringList shippedDirs, QString userDir, QObject* parent)
    : QObject(parent), shippedDirs_(std::move(shippedDirs)), userDir_(std::move(userDir)) {
  QStringList watched = shippedDirs_;
  if (!userDir_.isEmpty()) watched << userDir_;
  for (const QString& dir : watched)
    if (QFileInfo(dir).isDir()) watcher_.addPath(dir);
  connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, &PresetManager::rescan);
  // An edited preset changes its title, tab or family: watch the files too.
  connect(&watcher_, &QFileSystemWatcher::fileChanged, this, &PresetManager::rescan);
  rescan();
}

void PresetManager::rescan() {
  presets_.clear();
  const auto scan = [this](const QString& dir, bool user) {
    const QFileInfoList files = QDir(dir).entryInfoList({QStringLiteral("*.toml")}, QDir::Files, QDir::Name);
    for (const QFileInfo& file : files) presets_.push_back(readPresetInfo(file.absoluteFilePath(), user));
  };
  for (const QString& dir : shippedDirs_) scan(dir, false);
  if (!userDir_.isEmpty()) scan(userDir_, true);
  if (!watcher_.files().isEmpty()) watcher_.removePaths(watcher_.files());
  QStringList files;
  for (const PresetInfo& p : presets_) files << p.path;
  if (!files.isEmpty()) watcher_.addPaths(files);
  emit changed();
}

std::vector<PresetInfo> PresetManager::presetsForTab(Tab tab) const {
  std::vector<PresetInfo> out;
  // A preset for a family the tab does not train (the FLUX compile preset on Textual Inversion) is left out.
  for (const PresetInfo& p : presets_)
    if ((!p.tab || *p.tab == tab) && (!p.family || tabTrainsFamily(tab, *p.family))) out.push_back(p);
  return out;
}

}  // namespace sinter::gui

#include "config_document.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QSaveFile>

#include "core/toml_config.h"

namespace sinter::gui {

QString ConfigDocument::displayName() const {
  return path_.isEmpty() ? QCoreApplication::translate("ConfigDocument", "Untitled") : QFileInfo(path_).fileName();
}

LoadedConfig ConfigDocument::load(const QString& path) {
  LoadedConfig out;
  try {
    LoadResult result = loadConfigFile(path.toStdString());
    out.config = std::move(result.config);
    for (const Diagnostic& d : result.warnings) out.warnings << QString::fromStdString(d.format());
    out.ok = true;
  } catch (const ConfigError& e) {
    out.error = QString::fromStdString(formatAll(e.diagnostics()));
  } catch (const std::exception& e) {
    out.error = QString::fromUtf8(e.what());
  }
  return out;
}

QString ConfigDocument::toToml(const Config& config, Tab tab, std::optional<Family> family) {
  return QString::fromStdString(writeConfigToml(config, tab, family));
}

bool ConfigDocument::writeText(const QString& path, const QString& text, QString* error) {
  QSaveFile file(path);
  const QByteArray bytes = text.toUtf8();
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
    if (error)
      *error = QCoreApplication::translate("ConfigDocument", "Could not write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

}  // namespace sinter::gui

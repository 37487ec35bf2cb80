#pragma once
// A tab's config file: its path and unsaved state; loading and saving through core (TOML,
// the seed's rules), written atomically with QSaveFile.
#include <QString>
#include <QStringList>
#include <optional>

#include "core/config.h"

namespace sinter::gui {

struct LoadedConfig {
  bool ok = false;
  Config config;
  QString error;         // core's message, naming the file, line and column
  QStringList warnings;  // accepted, but worth telling
};

class ConfigDocument {
 public:
  const QString& path() const { return path_; }
  void setPath(const QString& path) { path_ = path; }
  bool isModified() const { return modified_; }
  void setModified(bool modified) { modified_ = modified; }
  bool isUntitled() const { return path_.isEmpty(); }
  // The file name for the title bar ("Untitled" when new).
  QString displayName() const;

  static LoadedConfig load(const QString& path);
  // The TOML the file gets: core's writer for the tab and family.
  static QString toToml(const Config& config, Tab tab, std::optional<Family> family);
  // Writes `text` atomically; false with a message naming the path on failure.
  static bool writeText(const QString& path, const QString& text, QString* error);

 private:
  QString path_;
  bool modified_ = false;
};

}  // namespace sinter::gui

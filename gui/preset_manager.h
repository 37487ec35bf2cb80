#pragma once
// Presets: TOML files in the shipped folders and the user's folder, listed per tab and rescanned
// when the folders change.
#include <QFileSystemWatcher>
#include <QObject>
#include <QStringList>
#include <optional>
#include <vector>

#include "core/option.h"

namespace sinter::gui {

struct PresetInfo {
  QString path;
  QString title;        // from the file's leading comment, else its name
  QString description;  // the whole leading comment
  bool user = false;
  std::optional<Tab> tab;  // the preset's training_type; nullopt: any tab
  std::optional<Family> family;
  QString error;     // a preset core refuses is listed with its error and cannot be applied
};

class PresetManager : public QObject {
  Q_OBJECT
 public:
  PresetManager(QStringList shippedDirs, QString userDir, QObject* parent = nullptr);
  std::vector<PresetInfo> presetsForTab(Tab tab) const;
  const std::vector<PresetInfo>& all() const { return presets_; }
  QString userDir() const { return userDir_; }
  void rescan();

 signals:
  void changed();

 private:
  QStringList shippedDirs_;
  QString userDir_;
  QFileSystemWatcher watcher_;
  std::vector<PresetInfo> presets_;
};

PresetInfo readPresetInfo(const QString& path, bool user);

}  // namespace sinter::gui

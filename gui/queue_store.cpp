#include "queue_store.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStandardPaths>

#include "config_document.h"
#include "core/saved_train_state.h"

namespace sinter::gui {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
std::string toStd(const QString& text) { return text.toStdString(); }
QString cleanAbsolute(const QString& base, const QString& path) { return QDir::cleanPath(QDir(base).absoluteFilePath(path)); }

const QString kRunsFolder = QStringLiteral("runs");

}  // namespace

QueueStore::QueueStore(const QString& folder) : folder_(folder) {}
QueueStore::~QueueStore() = default;

QString QueueStore::defaultFolder() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath(QStringLiteral("queue"));
}

QString QueueStore::filePath() const { return QDir(folder_).filePath(QStringLiteral("queue.toml")); }

bool QueueStore::load(QString* error) {
  queue_ = RunQueue();
  usable_ = false;
  if (!QDir().mkpath(folder_)) {
    if (error) *error = QCoreApplication::translate("QueueStore", "Cannot make the queue folder %1.").arg(folder_);
    return false;
  }
  lock_ = std::make_unique<QLockFile>(QDir(folder_).filePath(QStringLiteral("queue.lock")));
  lock_->setStaleLockTime(0);  // stale only when its process is gone
  if (!lock_->tryLock(0)) {
    qint64 pid = 0;
    QString host, app;
    lock_->getLockInfo(&pid, &host, &app);
    lock_.reset();
    if (error) *error = QCoreApplication::translate("QueueStore", "The run queue is in use by another Sinter window (process %1); this one leaves it alone.").arg(pid);
    return false;
  }
  if (QFileInfo::exists(filePath())) {
    try {
      queue_ = loadRunQueueFile(toStd(filePath()));
    } catch (const ConfigError& e) {
      if (error) *error = q(formatAll(e.diagnostics()));
      return false;  // the file is kept as it is for a person to look at
    }
  }
  usable_ = true;
  if (markInterruptedRuns(queue_, toStd(QCoreApplication::translate("QueueStore", "The app ended during this run."))) > 0) return save(error);
  return true;
}

bool QueueStore::save(QString* error) {
  if (!usable_) {
    if (error) *error = QCoreApplication::translate("QueueStore", "The run queue is not open in this window.");
    return false;
  }
  QSaveFile file(filePath());
  const QByteArray bytes = QByteArray::fromStdString(writeRunQueue(queue_));
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
    if (error) *error = QCoreApplication::translate("QueueStore", "Could not write %1: %2").arg(filePath(), file.errorString());
    return false;
  }
  return true;
}

QString QueueStore::configPath(std::size_t index) const {
  return q(resolveQueuePath(toStd(filePath()), queue_.entries.at(index).config));
}

QueueEntryInfo QueueStore::info(std::size_t index) const {
  QueueEntryInfo out;
  const LoadedConfig loaded = ConfigDocument::load(configPath(index));
  if (!loaded.ok) {
    out.error = loaded.error;
    return out;
  }
  if (loaded.config.has("training_type")) out.tab = loaded.config.tab();
  out.outputName = q(runOutputName(loaded.config));
  return out;
}

QString QueueStore::outputFolder(std::size_t index) const {
  const QueueEntry& entry = queue_.entries.at(index);
  if (entry.outputDir.empty()) return {};
  const QString base = entry.workingDir.empty() ? QDir::currentPath() : q(resolveQueuePath(toStd(filePath()), entry.workingDir));
  return cleanAbsolute(base, q(entry.outputDir));
}

std::optional<QString> QueueStore::lastSavedState(std::size_t index, long long* step) const {
  const QString folder = outputFolder(index);
  if (folder.isEmpty()) return std::nullopt;
  const auto state = findLastSavedTrainState(toStd(folder), toStd(info(index).outputName));
  if (!state) return std::nullopt;
  if (step) *step = state->step;
  return q(state->folder);
}

bool QueueStore::addRun(Config config, Tab tab, std::optional<Family> family, const QString& workingDir, QString* adjusted,
                        QString* error) {
  if (!usable_) {
    if (error) *error = QCoreApplication::translate("QueueStore", "The run queue is not open in this window.");
    return false;
  }
  const QString outputName = q(runOutputName(config, tab));
  const QString wanted = cleanAbsolute(workingDir, q(config.getString("output_dir")));
  // Another entry writing the same files would overwrite them: this one gets a folder of its own.
  const auto taken = [&](const QString& folder) {
    for (std::size_t i = 0; i < queue_.entries.size(); ++i)
      if (outputFolder(i) == folder && info(i).outputName == outputName) return true;
    return false;
  };
  QString outputDir = wanted;
  for (int n = 2; taken(outputDir); ++n) {
    outputDir = wanted + QStringLiteral("-%1").arg(n);
    if (QFileInfo::exists(outputDir)) outputDir = wanted;  // on disk: someone's files; the next number
  }
  if (adjusted) *adjusted = outputDir == wanted ? QString() : outputDir;
  config.set("output_dir", toStd(outputDir));

  // The next snapshot number: after every snapshot there is and every entry names.
  const QDir runs(QDir(folder_).filePath(kRunsFolder));
  if (!QDir().mkpath(runs.path())) {
    if (error) *error = QCoreApplication::translate("QueueStore", "Cannot make the queue folder %1.").arg(runs.path());
    return false;
  }
  int last = 0;
  const QRegularExpression number(QStringLiteral("^(\\d+)\\.toml$"));
  QStringList names = runs.entryList({QStringLiteral("*.toml")}, QDir::Files);
  for (const QueueEntry& entry : queue_.entries) names << QFileInfo(q(entry.config)).fileName();
  for (const QString& name : names)
    if (const auto match = number.match(name); match.hasMatch()) last = std::max(last, match.captured(1).toInt());
  const QString name = QStringLiteral("%1.toml").arg(last + 1, 4, 10, QLatin1Char('0'));
  if (!ConfigDocument::writeText(runs.filePath(name), ConfigDocument::toToml(config, tab, family), error)) return false;

  QueueEntry entry;
  entry.config = toStd(kRunsFolder + QLatin1Char('/') + name);
  entry.outputDir = toStd(outputDir);
  entry.workingDir = toStd(QDir::cleanPath(QDir(workingDir).absolutePath()));
  queue_.entries.push_back(entry);
  return save(error);
}

bool QueueStore::removeRun(std::size_t index, QString* error) {
  const QString snapshot = configPath(index);
  const bool own = QFileInfo(snapshot).absolutePath() == QDir::cleanPath(QDir(folder_).filePath(kRunsFolder));
  queue_.entries.erase(queue_.entries.begin() + static_cast<std::ptrdiff_t>(index));
  if (!save(error)) return false;
  if (own) QFile::remove(snapshot);
  return true;
}

bool QueueStore::moveRun(std::size_t index, int delta, QString* error) {
  const long long to = static_cast<long long>(index) + delta;
  if (to < 0 || to >= static_cast<long long>(queue_.entries.size())) return true;
  std::swap(queue_.entries[index], queue_.entries[static_cast<std::size_t>(to)]);
  return save(error);
}

}  // namespace sinter::gui

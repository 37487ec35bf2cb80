#pragma once
// The app's run queue on disk (DESIGN.md §3, "Run queues"): <app data>/queue/queue.toml in core's
// queue format (core/run_queue.h), each entry's config a snapshot under queue/runs/NNNN.toml. Every
// change is saved at once (QSaveFile). Read at startup, an entry left `running` (the app ended
// during its run) becomes `interrupted`. A lock file keeps a second Sinter window off the queue.
#include <QLockFile>
#include <QString>
#include <QStringList>
#include <memory>
#include <optional>

#include "core/config.h"
#include "core/option.h"
#include "core/run_queue.h"

namespace sinter::gui {

// What the app shows of an entry: read from its snapshot.
struct QueueEntryInfo {
  std::optional<Tab> tab;  // from the snapshot's training_type; nullopt when it cannot be read
  QString outputName;      // the run's files' name (runOutputName)
  QString error;           // why the snapshot cannot be read
};

class QueueStore {
 public:
  // `folder`: where queue.toml and runs/ live (made on demand).
  explicit QueueStore(const QString& folder);
  ~QueueStore();
  // The app's own: <AppDataLocation>/queue.
  static QString defaultFolder();

  // Reads the file (a missing one is an empty queue), marking runs left `running` as interrupted.
  // False with `error` when the file cannot be read or another window holds the queue; the queue
  // is then empty and nothing is saved over the file.
  bool load(QString* error);
  bool isUsable() const { return usable_; }
  bool save(QString* error);

  const RunQueue& queue() const { return queue_; }
  RunQueue& queue() { return queue_; }
  QString filePath() const;
  QString folder() const { return folder_; }

  // Adds a run of `config` (the tab's, as Start would write it): its snapshot written as the next
  // runs/NNNN.toml, run from `workingDir`, into its output_dir made absolute from there; should
  // another entry write there under the same output name, into `<output_dir>-2`, `-3`, ... (the
  // first no entry uses and not on disk) instead, which `adjusted` names. Saved; false with `error`.
  bool addRun(Config config, Tab tab, std::optional<Family> family, const QString& workingDir, QString* adjusted,
              QString* error);
  // Removes an entry and its snapshot (when the snapshot is the queue's own). Saved.
  bool removeRun(std::size_t index, QString* error);
  // Moves an entry up (-1) or down (+1). Saved.
  bool moveRun(std::size_t index, int delta, QString* error);

  QString configPath(std::size_t index) const;  // the snapshot, absolute
  QueueEntryInfo info(std::size_t index) const;
  // Where the entry's run writes, absolute (its output_dir from its working folder); empty: unknown.
  QString outputFolder(std::size_t index) const;
  // The entry's last saved training state (its output folder's), for "Resume".
  std::optional<QString> lastSavedState(std::size_t index, long long* step = nullptr) const;

 private:
  QString folder_;
  RunQueue queue_;
  std::unique_ptr<QLockFile> lock_;
  bool usable_ = false;
};

}  // namespace sinter::gui

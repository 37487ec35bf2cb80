#pragma once
// The runner's own compile plan for the form's config (`sinter-runner --config_file TOML
// --compile_plan`): what the dry run prints under "# compile plan", for this machine, without the
// dry run's file checks. Requests are debounced, one process at a time; a newer request replaces
// an older one's answer.
#include <QObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>
#include <optional>

#include "core/config.h"

namespace sinter::gui {

class RunnerCompilePlan : public QObject {
  Q_OBJECT
 public:
  explicit RunnerCompilePlan(QObject* parent = nullptr);
  // Asks for the plan of `config` (written as `tab` writes it) after a short pause without changes.
  void request(const Config& config, Tab tab);

 signals:
  // The plan's lines, or the runner's errors when it refused the config (`ok` false).
  void planReady(const QString& text, bool ok);

 private:
  void start();
  void finished(int exitCode, QProcess::ExitStatus status);

  QTimer debounce_;
  QTemporaryDir dir_;
  std::optional<Config> pending_;
  Tab pendingTab_ = Tab::LoRA;
  QProcess* process_ = nullptr;
  bool stale_ = false;  // a request came while the process ran: its answer is not shown
};

}  // namespace sinter::gui

#include "runner_compile_plan.h"

#include "app_paths.h"
#include "config_document.h"

namespace sinter::gui {

RunnerCompilePlan::RunnerCompilePlan(QObject* parent) : QObject(parent) {
  debounce_.setSingleShot(true);
  debounce_.setInterval(400);
  connect(&debounce_, &QTimer::timeout, this, &RunnerCompilePlan::start);
}

void RunnerCompilePlan::request(const Config& config, Tab tab) {
  pending_ = config;
  pendingTab_ = tab;
  if (process_) stale_ = true;
  debounce_.start();
}

void RunnerCompilePlan::start() {
  if (!pending_) return;
  if (process_) return;  // finished() starts the newest request
  const QString file = dir_.filePath(QStringLiteral("plan.toml"));
  QString error;
  if (!dir_.isValid() || !ConfigDocument::writeText(file, ConfigDocument::toToml(*pending_, pendingTab_, pending_->family()), &error)) {
    emit planReady(tr("Could not write the config for the runner: %1").arg(error), false);
    pending_.reset();
    return;
  }
  pending_.reset();
  stale_ = false;
  process_ = new QProcess(this);
  connect(process_, &QProcess::finished, this, &RunnerCompilePlan::finished);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    emit planReady(tr("The runner could not be started (%1): %2").arg(runnerPath(), process_->errorString()), false);
    process_->deleteLater();
    process_ = nullptr;
  });
  process_->start(runnerPath(), {QStringLiteral("--config_file"), file, QStringLiteral("--compile_plan")});
}

void RunnerCompilePlan::finished(int exitCode, QProcess::ExitStatus status) {
  const QString out = QString::fromUtf8(process_->readAllStandardOutput()).trimmed();
  QStringList errors;
  for (const QString& line : QString::fromUtf8(process_->readAllStandardError()).split(QLatin1Char('\n')))
    if (line.contains(QStringLiteral("error"))) errors << line.trimmed();
  process_->deleteLater();
  process_ = nullptr;
  if (!stale_) {
    const bool ok = status == QProcess::NormalExit && exitCode == 0;
    emit planReady(ok ? out : (out.isEmpty() ? QString() : out + QLatin1Char('\n')) + errors.join(QLatin1Char('\n')), ok);
  }
  if (pending_ && !debounce_.isActive()) start();
}

}  // namespace sinter::gui

#include "run_controller.h"

#include <QFileInfo>
#include <QLocale>

namespace sinter::gui {

namespace {
QString cutNote(qint64 bytes) { return QLocale().formattedDataSize(bytes); }
}  // namespace

RunController::RunController(QObject* parent) : QObject(parent) {
  forceTimer_.setSingleShot(true);
  forceTimer_.setInterval(30000);
  connect(&forceTimer_, &QTimer::timeout, this, [this] {
    if (isRunning()) emit forceStopAvailable();
  });
}

RunController::~RunController() {
  if (process_ && process_->state() != QProcess::NotRunning) {
    process_->disconnect(this);
    process_->kill();
    process_->waitForFinished(3000);
  }
}

void RunController::start(const QString& program, const QStringList& arguments, const QString& workingDir) {
  if (isRunning()) return;
  delete process_;
  process_ = new QProcess(this);
  stdoutLines_ = LineSplitter();
  stderrLines_ = LineSplitter();
  stopRequested_ = false;
  forced_ = false;
  if (!workingDir.isEmpty()) process_->setWorkingDirectory(workingDir);
  // exec() of a folder fails with EACCES, which QProcess reports as "Permission denied".
  if (QFileInfo(program).isDir()) {
    emit failedToStart(tr("Could not start %1: it is a folder, not a program.").arg(program));
    return;
  }
  connect(process_, &QProcess::readyReadStandardOutput, this, &RunController::readStdout);
  connect(process_, &QProcess::readyReadStandardError, this, &RunController::readStderr);
  connect(process_, &QProcess::started, this, &RunController::started);
  connect(process_, &QProcess::finished, this, &RunController::onFinished);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart)
      emit failedToStart(tr("Could not start %1: %2").arg(process_->program(), process_->errorString()));
  });
  process_->start(program, arguments);
}

bool RunController::isRunning() const { return process_ && process_->state() != QProcess::NotRunning; }

void RunController::requestStop() {
  if (!isRunning()) return;
  if (stopRequested_) return;
  stopRequested_ = true;
  process_->terminate();
  forceTimer_.start();
}

void RunController::forceStop() {
  if (!isRunning()) return;
  forced_ = true;
  process_->kill();
}

bool RunController::sendCommand(const QString& command) {
  if (!isRunning()) return false;
  return process_->write((command + QLatin1Char('\n')).toUtf8()) > 0;
}

bool RunController::waitForFinished(int ms) { return !process_ || process_->waitForFinished(ms); }

void RunController::readStdout() {
  for (const OutputLine& line : stdoutLines_.feed(process_->readAllStandardOutput())) handleStdoutLine(line);
}

void RunController::readStderr() {
  for (const OutputLine& line : stderrLines_.feed(process_->readAllStandardError())) handleStderrLine(line);
}

void RunController::handleStderrLine(const OutputLine& line) {
  if (line.cutBytes == 0) {
    emit logLine(line.text, line.transient);
    return;
  }
  emit logLine(tr("%1 [… line cut: %2 more not read]").arg(line.text, cutNote(line.cutBytes)), line.transient);
}

void RunController::handleStdoutLine(const OutputLine& line) {
  if (line.cutBytes > 0) {
    // No event is this long: the first part of it is shown, as any other stray stdout line.
    emit logLine(tr("%1 [… line cut: %2 more not read; a line this long is not read as an event]")
                     .arg(line.text, cutNote(line.cutBytes)),
                 false);
    return;
  }
  if (line.text.trimmed().isEmpty()) return;
  if (auto event = events::parseJsonLine(line.text.toStdString()))
    emit eventReceived(*event);
  else
    emit logLine(line.text, false);  // not an event: show it rather than lose it
}

void RunController::onFinished(int exitCode, QProcess::ExitStatus status) {
  forceTimer_.stop();
  readStdout();
  readStderr();
  for (const OutputLine& line : stdoutLines_.finish()) handleStdoutLine(line);
  for (const OutputLine& line : stderrLines_.finish()) handleStderrLine(line);
  emit finished(exitCode, status == QProcess::CrashExit);
}

}  // namespace sinter::gui

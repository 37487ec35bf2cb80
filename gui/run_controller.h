#pragma once
// One sinter-runner process: started with an argument list (never a shell), its stdout read as
// JSONL events and its stderr as log lines (each line capped by LineSplitter; a cut line says how
// much was cut). Stop asks politely (SIGTERM: the runner saves and
// exits 0); after a timeout Force stop becomes available and kills it. Commands during the run
// (sample, save, stop_after_epoch, pause, resume) go to its stdin, one a line (`--control stdin`).
#include <QObject>
#include <QProcess>
#include <QTimer>

#include "core/events.h"
#include "line_splitter.h"

namespace sinter::gui {

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  void start(const QString& program, const QStringList& arguments, const QString& workingDir = {});
  bool isRunning() const;
  void requestStop();
  void forceStop();
  // Writes `command` and a line end to the runner's stdin; false when no runner is running.
  bool sendCommand(const QString& command);
  bool stopRequested() const { return stopRequested_; }
  bool forceStopped() const { return forced_; }
  void setForceStopDelay(int ms) { forceTimer_.setInterval(ms); }
  // Blocks until the process ends (for closing the window and for tests).
  bool waitForFinished(int ms);

 signals:
  void started();
  void failedToStart(const QString& message);
  void eventReceived(const sinter::events::Event& event);
  void logLine(const QString& text, bool transient);
  void forceStopAvailable();
  void finished(int exitCode, bool crashed);

 private:
  void readStdout();
  void readStderr();
  void onFinished(int exitCode, QProcess::ExitStatus status);
  void handleStdoutLine(const OutputLine& line);
  void handleStderrLine(const OutputLine& line);

  QProcess* process_ = nullptr;
  LineSplitter stdoutLines_;
  LineSplitter stderrLines_;
  QTimer forceTimer_;
  bool stopRequested_ = false;
  bool forced_ = false;
};

}  // namespace sinter::gui

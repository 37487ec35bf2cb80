#include "run_panel.h"

#include <QHBoxLayout>
#include <QPushButton>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include "log_view.h"
#include "loss_chart.h"
#include "run_controller.h"
#include "run_control_text.h"
#include "run_monitor.h"
#include "sample_gallery.h"

namespace sinter::gui {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
QString joined(const std::vector<std::string>& items) {
  QStringList out;
  for (const auto& i : items) out << q(i);
  return out.isEmpty() ? QStringLiteral("–") : out.join(QStringLiteral(", "));
}
}  // namespace

RunPanel::RunPanel(QWidget* parent) : QWidget(parent) {
  controller_ = new RunController(this);
  monitor_ = new RunMonitor(this);
  log_ = new LogView(this);
  chart_ = new LossChart(this);
  gallery_ = new SampleGallery(this);

  start_ = new QPushButton(tr("Start training"), this);
  start_->setObjectName(QStringLiteral("startButton"));
  start_->setDefault(true);
  stop_ = new QPushButton(tr("Stop"), this);
  stop_->setToolTip(tr("Finish the current step, save the network and training state, then stop"));
  force_ = new QPushButton(tr("Force stop"), this);
  force_->setToolTip(tr("Kill the runner now; nothing more is saved"));
  // The controls during a run act at the runner's next step boundary (its `control` events say what they did).
  sampleNow_ = new QPushButton(controlCommandLabel(control_words::kSample), this);
  sampleNow_->setToolTip(tr("Render the sample prompts after the current step, as sample_every_n_steps would"));
  saveNow_ = new QPushButton(controlCommandLabel(control_words::kSave), this);
  saveNow_->setToolTip(tr("Save the trained weights after the current step, as save_every_n_steps names them (and the "
                          "training state with save_state)"));
  stopAfterEpoch_ = new QPushButton(controlCommandLabel(control_words::kStopAfterEpoch), this);
  stopAfterEpoch_->setToolTip(tr("Finish the current epoch, save as at the end of the run, and end the run there"));
  pause_ = new QPushButton(this);
  showPauseAs(false);
  print_ = new QPushButton(tr("Print command"), this);
  print_->setToolTip(tr("Show the exact command and the TOML file a run would use"));

  // Several GPUs of this machine: one runner process each (the runner's --nproc_per_node). A
  // launch setting, as accelerate's num_processes is, so it is kept with the app, not in the TOML.
  gpus_ = new QSpinBox(this);
  gpus_->setObjectName(QStringLiteral("gpuCount"));
  gpus_->setRange(1, 16);
  gpus_->setValue(QSettings().value(QStringLiteral("run/gpus"), 1).toInt());
  gpus_->setToolTip(tr("Train on this many GPUs of this machine, one process each (data parallel): every GPU takes its "
                       "share of each epoch's batches, so an epoch has fewer steps. Without a GPU the processes share the CPU."));
  auto* gpusLabel = new QLabel(tr("GPUs:"), this);
  gpusLabel->setBuddy(gpus_);
  connect(gpus_, qOverload<int>(&QSpinBox::valueChanged), this, [](int n) { QSettings().setValue(QStringLiteral("run/gpus"), n); });

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(start_);
  buttons->addWidget(stop_);
  buttons->addWidget(force_);
  buttons->addWidget(sampleNow_);
  buttons->addWidget(saveNow_);
  buttons->addWidget(stopAfterEpoch_);
  buttons->addWidget(pause_);
  buttons->addStretch(1);
  buttons->addWidget(gpusLabel);
  buttons->addWidget(gpus_);
  buttons->addWidget(print_);

  // Log beside loss and samples: all stay in sight while a run goes on.
  auto* progress = new QSplitter(Qt::Vertical, this);
  progress->addWidget(chart_);
  progress->addWidget(gallery_);
  progress->setChildrenCollapsible(false);
  progress->setSizes({300, 300});
  views_ = new QSplitter(Qt::Horizontal, this);
  views_->addWidget(log_);
  views_->addWidget(progress);
  views_->setStretchFactor(0, 3);
  views_->setStretchFactor(1, 2);
  views_->setChildrenCollapsible(false);
  views_->setSizes({700, 560});

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(buttons);
  layout->addWidget(monitor_);
  layout->addWidget(views_, 1);

  connect(start_, &QPushButton::clicked, this, &RunPanel::startRequested);
  connect(print_, &QPushButton::clicked, this, &RunPanel::printCommandRequested);
  connect(stop_, &QPushButton::clicked, this, &RunPanel::requestStop);
  connect(force_, &QPushButton::clicked, this, &RunPanel::forceStop);
  connect(sampleNow_, &QPushButton::clicked, this,
          [this] { sendControl(control_words::kSample, tr("Sample now asked: the runner samples after the current step.")); });
  connect(saveNow_, &QPushButton::clicked, this,
          [this] { sendControl(control_words::kSave, tr("Save now asked: the runner saves after the current step.")); });
  connect(stopAfterEpoch_, &QPushButton::clicked, this, [this] {
    stopAfterEpoch_->setEnabled(false);  // asked once; the runner acknowledges which epoch
    sendControl(control_words::kStopAfterEpoch, tr("Stop after this epoch asked: the run ends when the current epoch does."));
  });
  connect(pause_, &QPushButton::clicked, this, &RunPanel::togglePause);
  connect(controller_, &RunController::eventReceived, this, &RunPanel::onEvent);
  connect(controller_, &RunController::logLine, this, [this](const QString& text, bool transient) {
    log_->appendLine(text, transient);
    if (!transient) monitor_->noteLogLine(text);
  });
  connect(monitor_, &RunMonitor::notice, this, [this](const QString& text) { log_->appendLine(text); });
  connect(controller_, &RunController::forceStopAvailable, this, [this] {
    force_->setVisible(true);
    log_->appendLine(tr("The runner has not stopped yet; Force stop kills it."));
  });
  connect(controller_, &RunController::finished, this, &RunPanel::onFinished);
  connect(controller_, &RunController::failedToStart, this, [this](const QString& message) {
    log_->appendLine(message);
    monitor_->handleFailedToStart(message);
    setRunning(false);
  });
  setRunning(false);
}

void RunPanel::startProcess(const QString& program, const QStringList& args, const QString& workingDir) {
  log_->clear();
  chart_->clear();
  monitor_->reset();
  setRunning(true);
  controller_->start(program, args, workingDir);
}

bool RunPanel::isRunning() const { return controller_->isRunning(); }

void RunPanel::requestStop() {
  if (!isRunning()) return;
  log_->appendLine(tr("Stop requested: the runner finishes the current step and saves."));
  stop_->setEnabled(false);
  for (QPushButton* b : {sampleNow_, saveNow_, stopAfterEpoch_, pause_}) b->setEnabled(false);
  controller_->requestStop();
}

void RunPanel::forceStop() { controller_->forceStop(); }

QStringList RunPanel::controlArguments() { return {QStringLiteral("--control"), QStringLiteral("stdin")}; }

void RunPanel::sendControl(const char* command, const QString& asked) {
  if (!controller_->sendCommand(QString::fromLatin1(command))) return;
  log_->appendLine(asked);
}

void RunPanel::togglePause() {
  // Resume is offered at once: a resume sent before the pause took effect ends it at the same step.
  if (pauseShown_)
    sendControl(control_words::kResume, tr("Resume asked."));
  else
    sendControl(control_words::kPause, tr("Pause asked: the run pauses after the current step."));
  showPauseAs(!pauseShown_);
}

void RunPanel::showPauseAs(bool paused) {
  pauseShown_ = paused;
  pause_->setText(controlCommandLabel(paused ? control_words::kResume : control_words::kPause));
  pause_->setToolTip(paused ? tr("Go on training from where the run paused")
                            : tr("Pause after the current step; the model stays loaded, and the pause counts in no step time, "
                                 "it/s or ETA"));
}

void RunPanel::onEvent(const events::Event& event) {
  using namespace events;
  monitor_->handleEvent(event);
  if (const auto* start = std::get_if<Start>(&event)) {
    chart_->setTotalSteps(static_cast<double>(start->total_steps));
    gallery_->startRun();
  } else if (const auto* step = std::get_if<Step>(&event)) {
    chart_->addPoint(static_cast<double>(step->step), step->loss);
  } else if (const auto* validation = std::get_if<Validation>(&event)) {
    chart_->addValidationPoint(static_cast<double>(validation->step), validation->loss);
  } else if (const auto* plan = std::get_if<CompilePlan>(&event)) {
    log_->appendLine(tr("Compile plan: %1; mechanisms: %2; regions: %3")
                         .arg(plan->enabled ? tr("backend=%1, mode=%2, dynamic=%3").arg(q(plan->backend), q(plan->mode), q(plan->dynamic))
                                            : tr("off"),
                              joined(plan->mechanisms), joined(plan->regions)));
    for (const auto& u : plan->unavailable) log_->appendLine(tr("Unavailable in this build: %1").arg(q(u)));
  } else if (const auto* warning = std::get_if<Warning>(&event)) {
    log_->appendLine(tr("Warning: %1").arg(q(warning->message)));
  } else if (const auto* error = std::get_if<Error>(&event)) {
    log_->appendLine(tr("Error: %1").arg(q(error->message)));
  } else if (const auto* saved = std::get_if<Saved>(&event)) {
    log_->appendLine(tr("Saved (%1): %2").arg(q(saved->kind), q(saved->path)));
    if (saved->kind == "best") {
      QStringList kept;
      for (const std::string& path : saved->best) kept << q(path);
      chart_->addBestSave(q(saved->path), static_cast<double>(saved->step), saved->loss, kept);
    }
  } else if (const auto* done = std::get_if<Done>(&event)) {
    if (done->reason == "early_stop") chart_->markEarlyStop(static_cast<double>(done->steps));
  } else if (const auto* sample = std::get_if<Sample>(&event)) {
    log_->appendLine(tr("Sample: %1 (%2)").arg(q(sample->path), q(sample->prompt)));
    gallery_->addSample(*sample);
  } else if (const auto* control = std::get_if<Control>(&event)) {
    log_->appendLine(controlAcknowledgement(*control));
    // The button follows what the runner did: paused, resumed, or a pause it did not take.
    if (control->command == control_words::kPause || control->command == control_words::kResume) showPauseAs(monitor_->isPaused());
  }
}

void RunPanel::onFinished(int exitCode, bool crashed) {
  monitor_->handleFinished(exitCode, crashed, controller_->forceStopped());
  log_->appendLine(tr("Runner exited with code %1.").arg(exitCode));
  log_->flush();
  chart_->refresh();
  setRunning(false);
}

void RunPanel::setRunning(bool running) {
  start_->setEnabled(!running);
  gpus_->setEnabled(!running);
  stop_->setEnabled(running);
  for (QPushButton* b : {sampleNow_, saveNow_, stopAfterEpoch_, pause_}) b->setEnabled(running);
  showPauseAs(false);
  force_->setVisible(false);
  emit runningChanged(running);
}

QStringList RunPanel::launchArguments() const {
  if (gpus_->value() <= 1) return {};
  return {QStringLiteral("--nproc_per_node"), QString::number(gpus_->value())};
}

}  // namespace sinter::gui

#include "queue_panel.h"

#include <QColor>
#include <QComboBox>
#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QProcess>
#include <QProcessEnvironment>
#include <QPushButton>
#include <QStatusBar>
#include <QSystemTrayIcon>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "app_paths.h"
#include "queue_runner.h"
#include "queue_store.h"
#include "shell_quote.h"
#include "training_tab.h"

namespace sinter::gui {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }

enum Column { kNumber, kRun, kStatus, kOutput, kMessage };
}  // namespace

QString QueuePanel::statusName(QueueStatus status) {
  switch (status) {
    case QueueStatus::Pending: return tr("Pending");
    case QueueStatus::Running: return tr("Running");
    case QueueStatus::Done: return tr("Done");
    case QueueStatus::Failed: return tr("Failed");
    case QueueStatus::Interrupted: return tr("Interrupted");
  }
  return {};
}

QueuePanel::QueuePanel(std::vector<TrainingTab*> tabs, std::function<TrainingTab*()> currentTab, const QString& folder,
                       QWidget* parent)
    : QWidget(parent), tabs_(std::move(tabs)), currentTab_(std::move(currentTab)), store_(new QueueStore(folder)) {
  runner_ = new QueueRunner(store_, tabs_, this);

  list_ = new QTreeWidget(this);
  list_->setObjectName(QStringLiteral("queueList"));
  list_->setRootIsDecorated(false);
  list_->setSelectionMode(QAbstractItemView::SingleSelection);
  list_->setHeaderLabels({tr("#"), tr("Run"), tr("Status"), tr("Output folder"), tr("Message")});
  list_->header()->setStretchLastSection(true);

  add_ = new QPushButton(tr("Add current config to queue"), this);
  add_->setToolTip(tr("Keep a copy of the current tab's settings as the next run of the queue, with an output folder of its own"));
  up_ = new QPushButton(tr("Up"), this);
  down_ = new QPushButton(tr("Down"), this);
  remove_ = new QPushButton(tr("Remove"), this);
  resume_ = new QPushButton(tr("Resume"), this);
  resume_->setToolTip(tr("Queue the run again, going on from the last training state it saved"));
  again_ = new QPushButton(tr("Run again"), this);
  again_->setToolTip(tr("Queue the run again from its start"));
  start_ = new QPushButton(tr("Start queue"), this);
  start_->setObjectName(QStringLiteral("startQueueButton"));
  start_->setToolTip(tr("Run the pending entries one after another, each in the tab of its training type"));
  stop_ = new QPushButton(tr("Stop queue"), this);
  stop_->setToolTip(tr("Stop the run going on (it saves its network and training state) and start no other"));

  onFailure_ = new QComboBox(this);
  onFailure_->addItem(tr("Go on with the next run"));
  onFailure_->addItem(tr("Stop the queue"));
  auto* onFailureLabel = new QLabel(tr("When a run fails:"), this);
  onFailureLabel->setBuddy(onFailure_);
  endCommand_ = new QLineEdit(this);
  endCommand_->setPlaceholderText(tr("optional, e.g. notify-send Sinter \"queue finished\""));
  endCommand_->setToolTip(tr("A program and its arguments, run (without a shell) when the queue ends; "
                             "SINTER_QUEUE_DONE, SINTER_QUEUE_FAILED, SINTER_QUEUE_INTERRUPTED and SINTER_QUEUE_PENDING "
                             "hold the counts"));
  auto* endCommandLabel = new QLabel(tr("When the queue ends, run:"), this);
  endCommandLabel->setBuddy(endCommand_);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {add_, up_, down_, remove_, resume_, again_}) buttons->addWidget(b);
  buttons->addStretch(1);
  buttons->addWidget(start_);
  buttons->addWidget(stop_);
  auto* settings = new QHBoxLayout;
  settings->addWidget(onFailureLabel);
  settings->addWidget(onFailure_);
  settings->addSpacing(16);
  settings->addWidget(endCommandLabel);
  settings->addWidget(endCommand_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(buttons);
  layout->addWidget(list_, 1);
  layout->addLayout(settings);
  layout->addWidget(status_);

  connect(add_, &QPushButton::clicked, this, &QueuePanel::addCurrentConfig);
  connect(up_, &QPushButton::clicked, this, [this] { moveSelected(-1); });
  connect(down_, &QPushButton::clicked, this, [this] { moveSelected(1); });
  connect(remove_, &QPushButton::clicked, this, &QueuePanel::removeSelected);
  connect(resume_, &QPushButton::clicked, this, &QueuePanel::resumeSelected);
  connect(again_, &QPushButton::clicked, this, &QueuePanel::runSelectedAgain);
  connect(start_, &QPushButton::clicked, runner_, &QueueRunner::start);
  connect(stop_, &QPushButton::clicked, runner_, &QueueRunner::stop);
  connect(list_, &QTreeWidget::itemSelectionChanged, this, &QueuePanel::updateButtons);
  connect(onFailure_, qOverload<int>(&QComboBox::activated), this, [this](int index) {
    store_->queue().onFailure = index == 1 ? QueueOnFailure::Stop : QueueOnFailure::Continue;
    QString error;
    if (!store_->save(&error)) report(error, true);
  });
  connect(endCommand_, &QLineEdit::editingFinished, this, &QueuePanel::setEndCommand);
  connect(runner_, &QueueRunner::changed, this, &QueuePanel::refresh);
  connect(runner_, &QueueRunner::runningChanged, this, &QueuePanel::updateButtons);
  connect(runner_, &QueueRunner::message, this, [this](const QString& text) { report(text); });
  connect(runner_, &QueueRunner::ended, this, &QueuePanel::onQueueEnded);

  QString error;
  if (!store_->load(&error)) report(error, true);
  else if (store_->queue().entries.empty()) report(tr("The queue is empty: “Add current config to queue” adds the current tab's settings."));
  else report(tr("Queue: %1").arg(QDir::toNativeSeparators(store_->filePath())));
  onFailure_->setCurrentIndex(store_->queue().onFailure == QueueOnFailure::Stop ? 1 : 0);
  QStringList command;
  for (const std::string& part : store_->queue().onEndCommand) command << q(part);
  endCommand_->setText(command.isEmpty() ? QString() : joinQuoted(command));
  refresh();
}

QueuePanel::~QueuePanel() {
  delete runner_;  // before the store it reads
  runner_ = nullptr;
  delete store_;
}

QString QueuePanel::statusText() const { return status_->text(); }

void QueuePanel::report(const QString& text, bool problem) {
  status_->setText(text);
  status_->setStyleSheet(problem ? QStringLiteral("color:#c02020;") : QString());
}

int QueuePanel::selectedRow() const {
  const QList<QTreeWidgetItem*> selected = list_->selectedItems();
  return selected.isEmpty() ? -1 : list_->indexOfTopLevelItem(selected.first());
}

void QueuePanel::select(int row) {
  if (row >= 0 && row < list_->topLevelItemCount()) list_->setCurrentItem(list_->topLevelItem(row));
}

void QueuePanel::refresh() {
  const int row = selectedRow();
  list_->clear();
  const RunQueue& queue = store_->queue();
  for (std::size_t i = 0; i < queue.entries.size(); ++i) {
    const QueueEntry& entry = queue.entries[i];
    const QueueEntryInfo info = store_->info(i);
    const QString run = info.tab ? tr("%1: %2").arg(tabTitle(*info.tab), info.outputName) : q(entry.config);
    auto* item = new QTreeWidgetItem({QString::number(i + 1), run, statusName(entry.status), QDir::toNativeSeparators(q(entry.outputDir)),
                                      q(entry.message)});
    QStringList tip{tr("Config: %1").arg(QDir::toNativeSeparators(store_->configPath(i)))};
    if (!entry.workingDir.empty()) tip << tr("Started in: %1").arg(QDir::toNativeSeparators(q(entry.workingDir)));
    if (!entry.resume.empty()) tip << tr("Resumes from: %1").arg(QDir::toNativeSeparators(q(entry.resume)));
    if (!info.error.isEmpty()) tip << info.error;
    item->setToolTip(kRun, tip.join(QLatin1Char('\n')));
    item->setToolTip(kMessage, q(entry.message));
    if (entry.status == QueueStatus::Failed) item->setForeground(kStatus, QColor(0xc0, 0x20, 0x20));
    list_->addTopLevelItem(item);
  }
  for (int c = kNumber; c < kMessage; ++c) list_->resizeColumnToContents(c);
  select(row);
  updateButtons();
}

void QueuePanel::updateButtons() {
  const bool usable = store_->isUsable();
  const int row = selectedRow();
  const RunQueue& queue = store_->queue();
  const QueueEntry* entry = row >= 0 && row < static_cast<int>(queue.entries.size()) ? &queue.entries[static_cast<std::size_t>(row)] : nullptr;
  const bool isRunningEntry = entry && entry->config == runner_->currentConfig();
  add_->setEnabled(usable);
  up_->setEnabled(usable && entry && row > 0);
  down_->setEnabled(usable && entry && row + 1 < static_cast<int>(queue.entries.size()));
  remove_->setEnabled(usable && entry && !isRunningEntry);
  const bool ended = entry && (entry->status == QueueStatus::Interrupted || entry->status == QueueStatus::Failed);
  long long step = 0;
  const std::optional<QString> state = ended ? store_->lastSavedState(static_cast<std::size_t>(row), &step) : std::nullopt;
  resume_->setEnabled(usable && state.has_value());
  resume_->setToolTip(state ? tr("Queue the run again, going on from %1 (step %2)").arg(QDir::toNativeSeparators(*state)).arg(step)
                            : tr("Queue the run again, going on from the last training state it saved"));
  again_->setEnabled(usable && entry && !isRunningEntry && entry->status != QueueStatus::Pending);
  start_->setEnabled(usable && !runner_->isRunning());
  stop_->setEnabled(runner_->isRunning());
  onFailure_->setEnabled(usable);
  endCommand_->setEnabled(usable);
}

bool QueuePanel::addCurrentConfig() {
  TrainingTab* tab = currentTab_ ? currentTab_() : nullptr;
  if (!tab) {
    report(tr("Choose a training tab (LoRA, DreamBooth, Fine-tune or Textual Inversion): its settings are what the queue runs."), true);
    return false;
  }
  const std::optional<Config> config = tab->configForQueue(tr("Add to queue"));
  if (!config) return false;
  QString adjusted, error;
  // Relative paths in the settings mean what they mean to Start: the folder the app started in.
  if (!store_->addRun(*config, tab->tab(), tab->family(), QDir::currentPath(), &adjusted, &error)) {
    report(error, true);
    return false;
  }
  refresh();
  select(list_->topLevelItemCount() - 1);
  if (adjusted.isEmpty())
    report(tr("Added to the queue as run %1.").arg(store_->queue().entries.size()));
  else
    report(tr("Added to the queue as run %1, into %2: another run of the queue writes the same files into its output folder.")
               .arg(store_->queue().entries.size())
               .arg(QDir::toNativeSeparators(adjusted)));
  return true;
}

void QueuePanel::moveSelected(int delta) {
  const int row = selectedRow();
  if (row < 0) return;
  QString error;
  if (!store_->moveRun(static_cast<std::size_t>(row), delta, &error)) report(error, true);
  refresh();
  select(row + delta);
}

void QueuePanel::removeSelected() {
  const int row = selectedRow();
  if (row < 0 || store_->queue().entries[static_cast<std::size_t>(row)].config == runner_->currentConfig()) return;
  QString error;
  if (!store_->removeRun(static_cast<std::size_t>(row), &error)) report(error, true);
  refresh();
  select(std::min(row, list_->topLevelItemCount() - 1));
}

void QueuePanel::resumeSelected() {
  const int row = selectedRow();
  if (row < 0) return;
  const std::optional<QString> state = store_->lastSavedState(static_cast<std::size_t>(row));
  if (!state) return;
  QueueEntry& entry = store_->queue().entries[static_cast<std::size_t>(row)];
  entry.status = QueueStatus::Pending;
  entry.resume = state->toStdString();
  entry.message = tr("Resumes from %1.").arg(QDir::toNativeSeparators(*state)).toStdString();
  QString error;
  if (!store_->save(&error)) report(error, true);
  refresh();
}

void QueuePanel::runSelectedAgain() {
  const int row = selectedRow();
  if (row < 0) return;
  QueueEntry& entry = store_->queue().entries[static_cast<std::size_t>(row)];
  entry.status = QueueStatus::Pending;
  entry.resume.clear();
  entry.message.clear();
  QString error;
  if (!store_->save(&error)) report(error, true);
  refresh();
}

void QueuePanel::setEndCommand() {
  std::vector<std::string> command;
  for (const QString& part : QProcess::splitCommand(endCommand_->text())) command.push_back(part.toStdString());
  if (command == store_->queue().onEndCommand) return;
  store_->queue().onEndCommand = command;
  QString error;
  if (!store_->save(&error)) report(error, true);
}

void QueuePanel::onQueueEnded(const QString& summary) {
  notify(summary);
  runEndCommand();
  emit queueEnded(summary);
}

void QueuePanel::notify(const QString& text) {
  report(text);
  // A desktop notification where a tray shows one; the status bar in any case.
  if (QSystemTrayIcon::isSystemTrayAvailable() && QSystemTrayIcon::supportsMessages()) {
    if (!tray_) tray_ = new QSystemTrayIcon(appIcon(), this);
    tray_->show();
    tray_->showMessage(tr("Sinter"), text, QSystemTrayIcon::Information, 15000);
  }
  if (auto* window = qobject_cast<QMainWindow*>(this->window())) window->statusBar()->showMessage(text);
}

void QueuePanel::runEndCommand() {
  const std::vector<std::string>& command = store_->queue().onEndCommand;
  if (command.empty()) return;
  int counts[5] = {0, 0, 0, 0, 0};
  for (const QueueEntry& entry : store_->queue().entries) ++counts[static_cast<int>(entry.status)];
  QProcess process;
  process.setProgram(q(command.front()));
  QStringList arguments;
  for (std::size_t i = 1; i < command.size(); ++i) arguments << q(command[i]);
  process.setArguments(arguments);
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.insert(QStringLiteral("SINTER_QUEUE_FILE"), store_->filePath());
  environment.insert(QStringLiteral("SINTER_QUEUE_DONE"), QString::number(counts[static_cast<int>(QueueStatus::Done)]));
  environment.insert(QStringLiteral("SINTER_QUEUE_FAILED"), QString::number(counts[static_cast<int>(QueueStatus::Failed)]));
  environment.insert(QStringLiteral("SINTER_QUEUE_INTERRUPTED"), QString::number(counts[static_cast<int>(QueueStatus::Interrupted)]));
  environment.insert(QStringLiteral("SINTER_QUEUE_PENDING"), QString::number(counts[static_cast<int>(QueueStatus::Pending)]));
  process.setProcessEnvironment(environment);
  const QString shown = shellCommandLine(process.program(), arguments);
  if (process.startDetached())
    report(statusText() + QLatin1Char('\n') + tr("Ran the end command: %1").arg(shown));
  else
    report(statusText() + QLatin1Char('\n') + tr("The end command could not be started: %1 (%2)").arg(shown, process.errorString()), true);
}

}  // namespace sinter::gui

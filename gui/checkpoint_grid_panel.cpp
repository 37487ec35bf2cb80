#include "checkpoint_grid_panel.h"

#include <QDir>
#include <algorithm>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>

#include "checkpoint_grid_layout.h"
#include "checkpoint_grid_view.h"
#include "log_view.h"
#include "run_controller.h"
#include "core/model_family_detect.h"

namespace sinter::gui {

namespace {
constexpr int kPathRole = Qt::UserRole;  // a saved file's absolute path; empty for the base model's row
QString q(const std::string& s) { return QString::fromStdString(s); }

// Whether a LoRA run's grid takes `file`: it holds LoRA modules (the runner's own rule). A file
// whose header cannot be read is offered, so that the runner says what is wrong with it.
bool holdsLoraModules(const QFileInfo& file) {
  try {
    return hasKohyaLoraModules(readSafetensorsKeys(file.absoluteFilePath().toStdString()));
  } catch (const std::exception&) {
    return true;
  }
}
}  // namespace

CheckpointGridPanel::CheckpointGridPanel(QWidget* parent) : QWidget(parent) {
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("checkpointGridSummary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  files_ = new QListWidget(this);
  files_->setObjectName(QStringLiteral("checkpointGridFiles"));
  files_->setToolTip(tr("The rows of the grid: the base model, then each checked file"));
  refresh_ = new QPushButton(tr("Refresh"), this);
  refresh_->setToolTip(tr("List the output folder's files again"));
  make_ = new QPushButton(tr("Make grid"), this);
  make_->setObjectName(QStringLiteral("makeCheckpointGrid"));
  make_->setToolTip(tr("Render the sample prompts for the base model and each checked file, each prompt with one seed in every row"));
  stop_ = new QPushButton(tr("Stop"), this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setFormat(tr("%v of %m images"));

  view_ = new CheckpointGridView(this);
  scroll_ = new QScrollArea(this);
  scroll_->setWidget(view_);
  scroll_->setWidgetResizable(false);
  scroll_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  log_ = new LogView(this);
  controller_ = new RunController(this);

  auto* left = new QWidget(this);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->addWidget(new QLabel(tr("Saved files"), left));
  leftLayout->addWidget(files_, 1);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(refresh_);
  buttons->addStretch(1);
  buttons->addWidget(stop_);
  buttons->addWidget(make_);
  leftLayout->addLayout(buttons);
  leftLayout->addWidget(progress_);

  auto* right = new QSplitter(Qt::Vertical, this);
  right->addWidget(scroll_);
  right->addWidget(log_);
  right->setStretchFactor(0, 4);
  right->setStretchFactor(1, 1);
  right->setChildrenCollapsible(false);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 3);
  split->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);

  connect(refresh_, &QPushButton::clicked, this, &CheckpointGridPanel::refreshRequested);
  connect(make_, &QPushButton::clicked, this, &CheckpointGridPanel::gridRequested);
  connect(stop_, &QPushButton::clicked, controller_, &RunController::requestStop);  // the grid saves nothing: it ends at once
  connect(controller_, &RunController::eventReceived, this, &CheckpointGridPanel::onEvent);
  connect(controller_, &RunController::logLine, log_, &LogView::appendLine);
  connect(controller_, &RunController::finished, this, &CheckpointGridPanel::onFinished);
  connect(controller_, &RunController::failedToStart, this, [this](const QString& message) {
    summary_->setText(message);
    updateButtons();
    emit gridFinished(-1);
  });
  setOutputFolder(QString(), Tab::LoRA);  // no folder yet: the kind of run does not matter
}

void CheckpointGridPanel::setOutputFolder(const QString& folder, Tab tab) {
  folder_ = folder;
  files_->clear();
  auto* base = new QListWidgetItem(checkpointGridRowLabel(CheckpointGridRow{true, {}, {}, 0, {}}), files_);
  base->setFlags(Qt::ItemIsEnabled);  // always a row: no box to clear
  base->setCheckState(Qt::Checked);
  base->setData(kPathRole, QString());
  if (folder.isEmpty()) {
    summary_->setText(tr("Set output_dir: the grid compares the files a run saves there."));
    updateButtons();
    return;
  }
  QFileInfoList saved = QDir(folder).entryInfoList({QStringLiteral("*.safetensors")}, QDir::Files, QDir::Time | QDir::Reversed);
  const qsizetype found = saved.size();
  if (tab == Tab::LoRA)
    saved.erase(std::remove_if(saved.begin(), saved.end(), [](const QFileInfo& f) { return !holdsLoraModules(f); }), saved.end());
  const int leftOut = static_cast<int>(found - saved.size());
  for (const QFileInfo& file : saved) {
    auto* item = new QListWidgetItem(file.fileName(), files_);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    item->setCheckState(Qt::Checked);
    item->setData(kPathRole, file.absoluteFilePath());
    item->setToolTip(file.absoluteFilePath());
  }
  QString summary = saved.isEmpty() ? tr("No saved files in %1 yet: the grid shows the base model alone.").arg(folder)
                                    : tr("%n saved file(s) in %1. Each checked one is a row, after the base model; each sample "
                                         "prompt is a column.",
                                         nullptr, static_cast<int>(saved.size()))
                                          .arg(folder);
  if (leftOut > 0)
    summary += QLatin1Char(' ') + tr("%n file(s) without LoRA modules (such as the embeddings a pivotal tuning run writes apart) "
                                     "are not listed: each LoRA file's row has the embeddings it bundles.",
                                     nullptr, leftOut);
  summary_->setText(summary);
  updateButtons();
}

QStringList CheckpointGridPanel::checkedFiles() const {
  QStringList out;
  for (int i = 0; i < files_->count(); ++i) {
    const QListWidgetItem* item = files_->item(i);
    const QString path = item->data(kPathRole).toString();
    if (!path.isEmpty() && item->checkState() == Qt::Checked) out << path;
  }
  return out;
}

void CheckpointGridPanel::startGrid(const QString& program, const QStringList& arguments, const QString& workingDir, const QString& output) {
  if (isRunning()) return;
  output_ = output;
  runnerErrors_.clear();
  log_->clear();
  progress_->setRange(0, 1);
  progress_->setValue(0);
  summary_->setText(tr("Rendering the grid: the base model loads, then each row's file…"));
  controller_->start(program, arguments, workingDir);
  updateButtons();
}

bool CheckpointGridPanel::isRunning() const { return controller_->isRunning(); }

bool CheckpointGridPanel::showGrid(const QString& path) {
  QString error;
  const std::optional<CheckpointGridImage> grid = readCheckpointGrid(path, &error);
  if (!grid) {
    view_->clear();
    summary_->setText(tr("The grid cannot be shown: %1").arg(error));
    return false;
  }
  view_->setGrid(*grid);
  summary_->setText(tr("%1: %2 rows × %3 prompts.").arg(path).arg(grid->layout.rows.size()).arg(grid->layout.columns.size()));
  return true;
}

void CheckpointGridPanel::showProblem(const QString& message) { summary_->setText(tr("No grid: %1").arg(message)); }

QString CheckpointGridPanel::summaryText() const { return summary_->text(); }

void CheckpointGridPanel::onEvent(const events::Event& event) {
  if (const auto* cell = std::get_if<events::GridCell>(&event)) {
    // The runner's numbers, clamped before any arithmetic (a hostile runner's overflow nothing).
    const long long rows = std::clamp(cell->rows, 1LL, 4096LL), columns = std::clamp(cell->columns, 1LL, 4096LL);
    const long long done = std::clamp(cell->row, 0LL, rows - 1) * columns + std::clamp(cell->column, 0LL, columns - 1) + 1;
    progress_->setRange(0, static_cast<int>(rows * columns));
    progress_->setValue(static_cast<int>(done));
  } else if (const auto* error = std::get_if<events::Error>(&event)) {
    runnerErrors_ << q(error->message);
    log_->appendLine(tr("Error: %1").arg(q(error->message)));
  } else if (const auto* warning = std::get_if<events::Warning>(&event)) {
    log_->appendLine(tr("Warning: %1").arg(q(warning->message)));
  }
}

void CheckpointGridPanel::onFinished(int exitCode, bool crashed) {
  log_->flush();
  updateButtons();
  if (crashed) {
    summary_->setText(tr("The runner stopped before the grid was written (exit code %1); its log is below.").arg(exitCode));
  } else if (exitCode != 0) {
    summary_->setText(tr("No grid (exit code %1): %2")
                          .arg(exitCode)
                          .arg(runnerErrors_.isEmpty() ? tr("see the runner's log below") : runnerErrors_.join(QStringLiteral("; "))));
  } else {
    showGrid(output_);
  }
  emit gridFinished(crashed ? -1 : exitCode);
}

void CheckpointGridPanel::updateButtons() {
  const bool running = isRunning();
  make_->setEnabled(!running && !folder_.isEmpty());
  refresh_->setEnabled(!running);
  stop_->setEnabled(running);
  files_->setEnabled(!running);
}

}  // namespace sinter::gui

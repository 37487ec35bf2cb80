#include "checkpoint_grid_window.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QVBoxLayout>

#include "app_paths.h"
#include "checkpoint_grid_panel.h"
#include "config_document.h"

namespace sinter::gui {

namespace {

// The settings' output_dir as the runner reads it (it starts in the app's current folder), or "".
QString outputFolderOf(const Config& config) {
  const QString dir = QString::fromStdString(config.getString("output_dir"));
  return dir.isEmpty() ? QString() : QDir::current().absoluteFilePath(dir);
}

}  // namespace

CheckpointGridWindow::CheckpointGridWindow(Tab tab, std::function<Config()> settings, const QString& title, QWidget* parent)
    : QDialog(parent), tab_(tab), settings_(std::move(settings)) {
  setWindowTitle(title);
  resize(1100, 700);
  panel_ = new CheckpointGridPanel(this);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(panel_);
  connect(panel_, &CheckpointGridPanel::gridRequested, this, &CheckpointGridWindow::makeGrid);
  connect(panel_, &CheckpointGridPanel::refreshRequested, this, [this] { panel_->setOutputFolder(outputFolderOf(settings_()), tab_); });
  connect(panel_, &CheckpointGridPanel::gridFinished, this, [this] { QFile::remove(toml_); });
}

CheckpointGridWindow::~CheckpointGridWindow() {
  if (!toml_.isEmpty()) QFile::remove(toml_);
}

void CheckpointGridWindow::showForSettings() {
  if (!panel_->isRunning()) panel_->setOutputFolder(outputFolderOf(settings_()), tab_);
  show();
  raise();
  activateWindow();
}

void CheckpointGridWindow::makeGrid() {
  if (panel_->isRunning()) return;
  const Config config = settings_();
  const QString folder = outputFolderOf(config);
  if (folder.isEmpty()) {
    panel_->setOutputFolder(folder, tab_);  // says output_dir is not set
    return;
  }
  const QString name = QString::fromStdString(runOutputName(config));
  const QString output = QDir(folder).filePath(
      QStringLiteral("sample/%1_grid_%2.png").arg(name, QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));
  toml_ = QDir(QStandardPaths::writableLocation(QStandardPaths::TempLocation))
              .filePath(QStringLiteral("sinter-checkpoint-grid-%1-%2.toml")
                            .arg(QString::fromUtf8(toString(tab_)))
                            .arg(QCoreApplication::applicationPid()));
  QString error;
  if (!ConfigDocument::writeText(toml_, ConfigDocument::toToml(config, tab_, config.family()), &error)) {
    panel_->showProblem(error);
    return;
  }
  QStringList arguments{QStringLiteral("--config_file"), toml_, QStringLiteral("--sample_grid"), output};
  arguments << panel_->checkedFiles();  // absolute paths: none reads as an option
  arguments << QStringLiteral("--events") << QStringLiteral("jsonl");
  panel_->startGrid(runnerPath(), arguments, QDir::currentPath(), output);
}

}  // namespace sinter::gui

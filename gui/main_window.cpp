#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDesktopServices>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QUrl>

#include "app_paths.h"
#include "core/kohya_import.h"
#include "preset_manager.h"
#include "queue_panel.h"
#include "queue_runner.h"
#include "queue_store.h"
#include "recent_files.h"
#include "run_controller.h"
#include "run_panel.h"
#include "tools_tab.h"
#include "training_tab.h"

namespace sinter::gui {

namespace {
const QString kTomlFilter = QStringLiteral("TOML (*.toml)");
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowIcon(appIcon());
  presets_ = new PresetManager(shippedPresetDirs(), userPresetDir(), this);

  openAction_ = new QAction(tr("&Open…"), this);
  openAction_->setShortcut(QKeySequence::Open);
  saveAction_ = new QAction(tr("&Save"), this);
  saveAction_->setShortcut(QKeySequence::Save);
  saveAsAction_ = new QAction(tr("Save &As…"), this);
  saveAsAction_->setShortcut(QKeySequence::SaveAs);
  connect(openAction_, &QAction::triggered, this, &MainWindow::openDialog);
  connect(saveAction_, &QAction::triggered, this, [this] {
    if (TrainingTab* tab = currentTab()) save(tab);
  });
  connect(saveAsAction_, &QAction::triggered, this, [this] {
    if (TrainingTab* tab = currentTab()) saveAs(tab);
  });

  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  const FileActions actions{openAction_, saveAction_, saveAsAction_};
  for (Tab t : allTabs()) {
    auto* tab = new TrainingTab(t, presets_, actions, tabs_);
    trainingTabs_.push_back(tab);
    tabs_->addTab(tab, tab->title());
    connect(tab, &TrainingTab::documentChanged, this, &MainWindow::updateTitle);
    connect(tab, &TrainingTab::errorReported, this, &MainWindow::showError);
    connect(tab, &TrainingTab::runningChanged, this, [this, tab](bool running) {
      const int index = tabs_->indexOf(tab);
      tabs_->setTabText(index, running ? tr("%1 (running)").arg(tab->title()) : tab->title());
      if (!running) closeWhenRunsEnded();
    });
  }
  toolsTab_ = new ToolsTab(tabs_);
  tabs_->addTab(toolsTab_, tr("Tools"));
  connect(toolsTab_, &ToolsTab::runningChanged, this, [this](bool running) {
    tabs_->setTabText(tabs_->indexOf(toolsTab_), running ? tr("%1 (running)").arg(tr("Tools")) : tr("Tools"));
  });
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::updateTitle);
  setCentralWidget(tabs_);
  queue_ = new QueuePanel(trainingTabs_, [this] { return currentTab(); }, QueueStore::defaultFolder(), this);
  queueDock_ = new QDockWidget(tr("Queue"), this);
  queueDock_->setObjectName(QStringLiteral("queueDock"));
  queueDock_->setWidget(queue_);
  addDockWidget(Qt::BottomDockWidgetArea, queueDock_);
  resizeDocks({queueDock_}, {200}, Qt::Vertical);  // the settings above keep most of the height
  queueDock_->setVisible(!queue_->store()->queue().entries.empty());  // shown by Run ▸ Queue
  buildMenus();
  statusBar();
  updateTitle();
  resize(1280, 800);
}

TrainingTab* MainWindow::tab(Tab t) const {
  for (TrainingTab* tab : trainingTabs_)
    if (tab->tab() == t) return tab;
  return nullptr;
}

TrainingTab* MainWindow::currentTab() const { return qobject_cast<TrainingTab*>(tabs_->currentWidget()); }

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* newAction = file->addAction(tr("&New"), this, &MainWindow::newConfig);
  newAction->setShortcut(QKeySequence::New);
  file->addAction(openAction_);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::updateRecentMenu);
  file->addAction(saveAction_);
  file->addAction(saveAsAction_);
  file->addSeparator();
  file->addAction(tr("&Import kohya_ss JSON…"), this, &MainWindow::importDialog);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  QAction* start = run->addAction(tr("&Start training"), this, [this] {
    if (TrainingTab* tab = currentTab()) tab->startRun();
  });
  start->setShortcut(Qt::Key_F5);
  run->addAction(tr("S&top"), this, [this] {
    if (TrainingTab* tab = currentTab()) tab->runPanel()->requestStop();
  });
  run->addAction(tr("&Print command"), this, [this] {
    if (TrainingTab* tab = currentTab()) emit tab->runPanel()->printCommandRequested();
  });
  run->addAction(tr("Check &dataset…"), this, [this] {
    if (TrainingTab* tab = currentTab()) tab->checkDataset();
  });
  run->addAction(tr("Checkpoint &grid…"), this, [this] {
    if (TrainingTab* tab = currentTab()) tab->showCheckpointGrid();
  });
  run->addSeparator();
  run->addAction(tr("Add current config to &queue"), this, [this] {
    queueDock_->show();
    queue_->addCurrentConfig();
  });
  QAction* showQueue = queueDock_->toggleViewAction();
  showQueue->setText(tr("&Queue"));
  run->addAction(showQueue);

  QMenu* settings = menuBar()->addMenu(tr("&Settings"));
  settings->addAction(tr("Runner &program…"), this, &MainWindow::chooseRunner);
  settings->addAction(tr("Use the &bundled runner"), this, [this] {
    setRunnerPathPreference(QString());
    statusBar()->showMessage(tr("Runner: %1").arg(runnerPath()), 6000);
  });
  settings->addAction(tr("Open user &preset folder"), this,
                      [this] { QDesktopServices::openUrl(QUrl::fromLocalFile(presets_->userDir())); });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Sinter"), this, &MainWindow::about);
}

void MainWindow::updateTitle() {
  TrainingTab* tab = currentTab();
  if (!tab) {  // the Tools tab: no document
    setWindowTitle(tr("Tools — Sinter"));
    setWindowModified(false);
    return;
  }
  setWindowTitle(tr("%1[*] — %2 — Sinter").arg(tab->document().displayName(), tab->title()));
  setWindowModified(tab->document().isModified());
}

void MainWindow::updateRecentMenu() {
  recentMenu_->clear();
  const QStringList recent = RecentFiles::list();
  for (const QString& path : recent) recentMenu_->addAction(path, this, [this, path] { openFile(path); });
  if (recent.isEmpty()) recentMenu_->addAction(tr("(none)"))->setEnabled(false);
  else {
    recentMenu_->addSeparator();
    recentMenu_->addAction(tr("Clear list"), this, [] { RecentFiles::clear(); });
  }
}

void MainWindow::showError(const QString& title, const QString& message) {
  QMessageBox::warning(this, title, message);
}

bool MainWindow::maybeSave(TrainingTab* tab) {
  if (!tab->document().isModified()) return true;
  tabs_->setCurrentWidget(tab);
  const auto answer = QMessageBox::warning(
      this, tr("Unsaved changes"),
      tr("The %1 settings (%2) have unsaved changes. Save them?").arg(tab->title(), tab->document().displayName()),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Cancel) return false;
  if (answer == QMessageBox::Save) return save(tab);
  return true;
}

bool MainWindow::save(TrainingTab* tab) {
  if (tab->document().isUntitled()) return saveAs(tab);
  QString error;
  if (!tab->saveFile(tab->document().path(), &error)) {
    showError(tr("Save"), error);
    return false;
  }
  RecentFiles::add(tab->document().path());
  statusBar()->showMessage(tr("Saved %1").arg(tab->document().path()), 4000);
  return true;
}

bool MainWindow::saveAs(TrainingTab* tab) {
  QString suggested = tab->document().path();
  if (suggested.isEmpty()) suggested = QStringLiteral("%1.toml").arg(QString::fromUtf8(toString(tab->tab())));
  QString path = QFileDialog::getSaveFileName(this, tr("Save configuration"), suggested, kTomlFilter);
  if (path.isEmpty()) return false;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".toml");
  QString error;
  if (!tab->saveFile(path, &error)) {
    showError(tr("Save"), error);
    return false;
  }
  RecentFiles::add(path);
  return true;
}

void MainWindow::newConfig() {
  TrainingTab* tab = currentTab() ? currentTab() : this->tab(Tab::LoRA);
  tabs_->setCurrentWidget(tab);
  if (maybeSave(tab)) tab->newConfig();
}

void MainWindow::openDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open configuration"), QString(),
                                                    tr("TOML (*.toml);;All files (*)"));
  if (!path.isEmpty()) openFile(path);
}

bool MainWindow::openFile(const QString& path) {
  const LoadedConfig peek = ConfigDocument::load(path);
  if (!peek.ok) {
    showError(tr("Open configuration"), peek.error);
    return false;
  }
  TrainingTab* target = peek.config.has("training_type") ? tab(peek.config.tab()) : currentTab() ? currentTab() : tab(Tab::LoRA);
  if (!maybeSave(target)) return false;
  QString error;
  QStringList warnings;
  if (!target->loadFile(path, &error, &warnings)) {
    showError(tr("Open configuration"), error);
    return false;
  }
  tabs_->setCurrentWidget(target);
  RecentFiles::add(path);
  if (!warnings.isEmpty()) statusBar()->showMessage(warnings.join(QStringLiteral("; ")), 10000);
  return true;
}

void MainWindow::importDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Import kohya_ss configuration"), QString(),
                                                    tr("kohya_ss JSON (*.json);;All files (*)"));
  if (!path.isEmpty()) importKohyaFile(path);
}

bool MainWindow::importKohyaFile(const QString& path) {
  KohyaImportResult result;
  try {
    result = importKohyaJsonFile(path.toStdString());
  } catch (const ConfigError& e) {
    showError(tr("Import kohya_ss configuration"), QString::fromStdString(formatAll(e.diagnostics())));
    return false;
  } catch (const std::exception& e) {
    showError(tr("Import kohya_ss configuration"), QString::fromUtf8(e.what()));
    return false;
  }
  TrainingTab* target = tab(result.config.tab());
  if (!maybeSave(target)) return false;
  target->showImported(result.config);
  if (result.processes > 0) target->runPanel()->gpuCountBox()->setValue(result.processes);
  tabs_->setCurrentWidget(target);
  showImportReport(result, QFileInfo(path).fileName(), target->title());
  return true;
}

// What changes training comes first: in the message itself, and at the top of the details, before
// what was carried over and what was at kohya_ss's defaults.
void MainWindow::showImportReport(const KohyaImportResult& result, const QString& fileName, const QString& tabTitle) {
  const auto lines = [](const std::vector<KohyaImportItem>& items) {
    QStringList out;
    for (const KohyaImportItem& item : items) out << QString::fromStdString(item.text);
    return out;
  };
  const QStringList notCarried = lines(result.notCarried);
  QStringList details;
  const auto section = [&details](const QString& title, const QStringList& items) {
    if (items.isEmpty()) return;
    if (!details.isEmpty()) details << QString();
    details << title;
    for (const QString& item : items) details << QStringLiteral("  ") + item;
  };
  section(tr("Not carried over: this changes training (%n)", nullptr, static_cast<int>(result.notCarried.size())), notCarried);
  section(tr("Carried over (%n)", nullptr, static_cast<int>(result.carried.size())), lines(result.carried));
  section(tr("At kohya_ss's defaults: nothing lost (%n)", nullptr, static_cast<int>(result.atDefaults.size())),
          lines(result.atDefaults));

  QMessageBox box(notCarried.isEmpty() ? QMessageBox::Information : QMessageBox::Warning, tr("Import kohya_ss configuration"),
                  tr("Imported %1 into the %2 tab.").arg(fileName, tabTitle), QMessageBox::Ok, this);
  box.setObjectName(QStringLiteral("importReport"));
  if (notCarried.isEmpty()) {
    box.setInformativeText(tr("Everything that changes training was carried over. The details list each setting."));
  } else {
    QString text = QStringLiteral("<p><b>%1</b></p><ul>")
                       .arg(tr("%n setting(s) not carried over: this changes training.", nullptr, static_cast<int>(notCarried.size()))
                                .toHtmlEscaped());
    for (const QString& item : notCarried) text += QStringLiteral("<li>%1</li>").arg(item.toHtmlEscaped());
    box.setInformativeText(text + QStringLiteral("</ul>"));
  }
  box.setDetailedText(details.join(QLatin1Char('\n')));
  box.exec();
}

void MainWindow::chooseRunner() {
  const QString path = QFileDialog::getOpenFileName(this, tr("sinter-runner program"), runnerPath());
  if (path.isEmpty()) return;
  setRunnerPathPreference(path);
  statusBar()->showMessage(tr("Runner: %1").arg(runnerPath()), 6000);
}

void MainWindow::about() {
  QMessageBox::about(this, tr("About Sinter"),
                     tr("<h3>Sinter %1</h3><p>A native training studio for SDXL, FLUX.1, SD 1.x, SD 2.x and SD 3.x.</p>"
                        "<p>Runner: %2</p>")
                         .arg(QStringLiteral(SINTER_VERSION), runnerPath().toHtmlEscaped()));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  std::vector<TrainingTab*> running;
  for (TrainingTab* tab : trainingTabs_)
    if (tab->isRunning()) running.push_back(tab);
  if (!running.empty() && !closingAfterRuns_) {
    const auto answer = QMessageBox::question(
        this, tr("Training is running"),
        tr("%n run(s) in progress. Stop them (they save first) and quit?", nullptr, static_cast<int>(running.size())),
        QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Yes) {
      event->ignore();
      return;
    }
  }
  if (!closingAfterRuns_)
    for (TrainingTab* tab : trainingTabs_)
      if (!maybeSave(tab)) {
        event->ignore();
        return;
      }
  if (running.empty()) {
    event->accept();
    return;
  }
  // The runs save before they exit; the window stays responsive meanwhile and closes after the
  // last one (each offers Force stop if its runner does not stop).
  closingAfterRuns_ = true;
  queue_->runner()->stop();  // its run becomes interrupted; nothing more starts
  for (TrainingTab* tab : running) tab->runPanel()->requestStop();
  statusBar()->showMessage(tr("Stopping the runs; the window closes when they have saved."));
  event->ignore();
}

void MainWindow::closeWhenRunsEnded() {
  if (!closingAfterRuns_) return;
  for (TrainingTab* tab : trainingTabs_)
    if (tab->isRunning()) return;
  QTimer::singleShot(0, this, &QWidget::close);
}

}  // namespace sinter::gui

#include "training_tab.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDialog>
#include <QDir>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QStandardPaths>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include "app_paths.h"
#include "checkpoint_grid_window.h"
#include "core/argv.h"
#include "core/toml_config.h"
#include "core/training_scripts.h"
#include "core/validation.h"
#include "dataset_check_panel.h"
#include "log_view.h"
#include "option_form.h"
#include "preset_diff_dialog.h"
#include "run_controller.h"
#include "run_panel.h"
#include "sample_gallery.h"

namespace sinter::gui {

QString tabTitle(Tab tab) {
  switch (tab) {
    case Tab::LoRA: return TrainingTab::tr("LoRA");
    case Tab::DreamBooth: return TrainingTab::tr("DreamBooth");
    case Tab::FineTune: return TrainingTab::tr("Fine-tune");
    case Tab::TextualInversion: return TrainingTab::tr("Textual Inversion");
  }
  return {};
}

TrainingTab::TrainingTab(Tab tab, PresetManager* presets, const FileActions& actions, QWidget* parent)
    : QWidget(parent), tab_(tab), presets_(presets) {
  form_ = new OptionForm(tab, this);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setWidget(form_);
  scroll->setFrameShape(QFrame::NoFrame);

  run_ = new RunPanel(this);
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(scroll);
  splitter->addWidget(run_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  splitter->setChildrenCollapsible(false);
  splitter->setSizes({430, 250});

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(buildConfigurationBox(actions));
  layout->addWidget(splitter, 1);

  connect(form_, &OptionForm::changed, this, [this] {
    if (loading_) return;
    document_.setModified(true);
    emit documentChanged();
  });
  connect(run_, &RunPanel::startRequested, this, &TrainingTab::startRun);
  connect(run_, &RunPanel::printCommandRequested, this, &TrainingTab::printCommand);
  connect(run_, &RunPanel::runningChanged, this, &TrainingTab::runningChanged);

  // The Dataset check window: a check run from here, or the report a run sends at its start.
  datasetCheckWindow_ = new QDialog(this);
  datasetCheckWindow_->setWindowTitle(tr("Dataset check — %1").arg(title()));
  datasetCheckWindow_->resize(900, 600);
  datasetCheck_ = new DatasetCheckPanel(datasetCheckWindow_);
  auto* checkLayout = new QVBoxLayout(datasetCheckWindow_);
  checkLayout->setContentsMargins(0, 0, 0, 0);
  checkLayout->addWidget(datasetCheck_);
  connect(datasetCheck_, &DatasetCheckPanel::checkRequested, this, &TrainingTab::checkDataset);
  connect(datasetCheck_, &DatasetCheckPanel::checkFinished, this, [this] { QFile::remove(datasetCheckToml_); });
  connect(run_->controller(), &RunController::eventReceived, this, [this](const events::Event& event) {
    const auto* report = std::get_if<events::DatasetCheck>(&event);
    if (!report) return;
    datasetCheck_->showReport(*report);
    const size_t findings = report->missing_captions.size() + report->empty_captions.size() + report->duplicates.size() +
                            report->too_small.size() + report->unreadable.size();
    run_->logView()->appendLine(tr("Dataset check: %n finding(s); Run ▸ Check dataset… shows them.", nullptr, static_cast<int>(findings)));
  });
  gridWindow_ = new CheckpointGridWindow(tab_, [this] { return runConfig(); }, tr("Checkpoint grid — %1").arg(title()), this);
  connect(run_->sampleGallery(), &SampleGallery::checkpointGridRequested, this, &TrainingTab::showCheckpointGrid);
  if (presets_) connect(presets_, &PresetManager::changed, this, &TrainingTab::refreshPresetList);
  refreshPresetList();
  newConfig();
}

QString TrainingTab::title() const { return tabTitle(tab_); }

QWidget* TrainingTab::buildConfigurationBox(const FileActions& actions) {
  auto* box = new QGroupBox(tr("Configuration"), this);
  auto* row = new QHBoxLayout(box);
  fileLabel_ = new QLabel(box);
  fileLabel_->setObjectName(QStringLiteral("configFileLabel"));
  fileLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  row->addWidget(fileLabel_, 1);
  for (QAction* action : {actions.open, actions.save, actions.saveAs}) {
    if (!action) continue;
    auto* button = new QToolButton(box);
    button->setDefaultAction(action);
    button->setToolButtonStyle(Qt::ToolButtonTextOnly);
    row->addWidget(button);
  }
  row->addSpacing(16);
  row->addWidget(new QLabel(tr("Preset:"), box));
  presetCombo_ = new QComboBox(box);
  presetCombo_->setObjectName(QStringLiteral("presetCombo"));
  presetCombo_->setMinimumContentsLength(28);
  presetCombo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  row->addWidget(presetCombo_);
  applyPreset_ = new QPushButton(tr("Apply…"), box);
  applyPreset_->setToolTip(tr("Show what the preset changes, then apply it"));
  row->addWidget(applyPreset_);
  auto* savePreset = new QPushButton(tr("Save as preset…"), box);
  savePreset->setToolTip(tr("Save the current settings as your own preset"));
  row->addWidget(savePreset);
  connect(applyPreset_, &QPushButton::clicked, this, &TrainingTab::onPresetApplyClicked);
  connect(presetCombo_, qOverload<int>(&QComboBox::currentIndexChanged), this,
          [this] { applyPreset_->setEnabled(!presetCombo_->currentData().toString().isEmpty()); });
  connect(savePreset, &QPushButton::clicked, this, &TrainingTab::onSavePresetClicked);
  row->addSpacing(16);
  auto* checkDatasetButton = new QPushButton(tr("Check dataset…"), box);
  checkDatasetButton->setObjectName(QStringLiteral("checkDatasetButton"));
  checkDatasetButton->setToolTip(tr("Read the dataset as a run would and list images without captions, empty captions, "
                                    "duplicates, images that are too small and files that cannot be read"));
  row->addWidget(checkDatasetButton);
  connect(checkDatasetButton, &QPushButton::clicked, this, &TrainingTab::checkDataset);
  return box;
}

Config TrainingTab::currentConfig() const { return form_->config(); }
std::optional<Family> TrainingTab::family() const { return form_->effectiveFamily(); }

void TrainingTab::setConfigQuietly(const Config& config) {
  loading_ = true;
  form_->setConfig(config);
  loading_ = false;
}

void TrainingTab::newConfig() {
  Config fresh;
  fresh.set("training_type", std::string(toString(tab_)));
  setConfigQuietly(fresh);
  document_.setPath(QString());
  document_.setModified(false);
  fileLabel_->setText(document_.displayName());
  emit documentChanged();
}

bool TrainingTab::loadFile(const QString& path, QString* error, QStringList* warnings) {
  LoadedConfig loaded = ConfigDocument::load(path);
  if (!loaded.ok) {
    if (error) *error = loaded.error;
    return false;  // the form keeps what it had
  }
  setConfigQuietly(loaded.config);
  document_.setPath(QFileInfo(path).absoluteFilePath());
  document_.setModified(false);
  fileLabel_->setText(QDir::toNativeSeparators(document_.path()));
  if (warnings) *warnings = loaded.warnings;
  emit documentChanged();
  return true;
}

bool TrainingTab::saveFile(const QString& path, QString* error) {
  const QString toml = ConfigDocument::toToml(currentConfig(), tab_, family());
  if (!ConfigDocument::writeText(path, toml, error)) return false;
  document_.setPath(QFileInfo(path).absoluteFilePath());
  document_.setModified(false);
  fileLabel_->setText(QDir::toNativeSeparators(document_.path()));
  emit documentChanged();
  return true;
}

void TrainingTab::showImported(const Config& config) {
  Config c = config;
  c.set("training_type", std::string(toString(tab_)));
  setConfigQuietly(c);
  document_.setPath(QString());
  document_.setModified(true);
  fileLabel_->setText(document_.displayName());
  emit documentChanged();
}

void TrainingTab::refreshPresetList() {
  if (!presetCombo_) return;
  const QString selected = presetCombo_->currentData().toString();
  presetCombo_->clear();
  presetCombo_->addItem(tr("Choose a preset…"), QString());
  if (presets_) {
    for (const PresetInfo& p : presets_->presetsForTab(tab_)) {
      QString text = p.user ? tr("%1 (yours)").arg(p.title) : p.title;
      if (!p.error.isEmpty()) text = tr("%1 (cannot be read)").arg(text);
      presetCombo_->addItem(text, p.path);
      const QString tip = !p.error.isEmpty() ? p.error
                          : p.description.isEmpty() ? p.path
                                                    : p.description + QStringLiteral("\n") + p.path;
      presetCombo_->setItemData(presetCombo_->count() - 1, tip, Qt::ToolTipRole);
    }
  }
  const int index = presetCombo_->findData(selected);
  if (index >= 0) presetCombo_->setCurrentIndex(index);
  applyPreset_->setEnabled(!presetCombo_->currentData().toString().isEmpty());
}

void TrainingTab::onPresetApplyClicked() {
  const QString path = presetCombo_->currentData().toString();
  if (!path.isEmpty()) applyPreset(path);
}

bool TrainingTab::applyPreset(const QString& presetPath) {
  const LoadedConfig preset = ConfigDocument::load(presetPath);
  if (!preset.ok) {
    emit errorReported(tr("Apply preset"), preset.error);
    return false;
  }
  Config presetConfig = preset.config;
  presetConfig.erase("training_type");  // a preset never moves the form to another tab
  const Config current = currentConfig();
  const std::vector<OptionChange> changes = presetChanges(current, presetConfig);
  const PresetInfo info = readPresetInfo(presetPath, false);
  if (changes.empty()) {
    emit errorReported(tr("Apply preset"), tr("“%1” would change nothing.").arg(info.title));
    return false;
  }
  PresetDiffDialog dialog(info.title, changes, this);
  if (dialog.exec() != QDialog::Accepted) return false;
  Config merged = current;
  merged.overlay(presetConfig);
  loading_ = true;
  form_->setConfig(merged);
  loading_ = false;
  document_.setModified(true);
  emit documentChanged();
  return true;
}

bool TrainingTab::saveAsUserPreset(const QString& name, QString* error) {
  QString fileName = name.trimmed();
  fileName.replace(QRegularExpression(QStringLiteral("[^\\w\\- ]")), QStringLiteral("_"));
  if (fileName.isEmpty()) {
    if (error) *error = tr("A preset needs a name.");
    return false;
  }
  const QString path = QDir(presets_ ? presets_->userDir() : userPresetDir()).filePath(fileName + QStringLiteral(".toml"));
  const QString text = QStringLiteral("# %1\n").arg(name.trimmed()) + ConfigDocument::toToml(currentConfig(), tab_, family());
  if (!ConfigDocument::writeText(path, text, error)) return false;
  if (presets_) presets_->rescan();
  return true;
}

void TrainingTab::onSavePresetClicked() {
  bool ok = false;
  const QString name = QInputDialog::getText(this, tr("Save as preset"), tr("Preset name:"), QLineEdit::Normal,
                                             QString(), &ok);
  if (!ok) return;
  QString error;
  if (!saveAsUserPreset(name, &error)) emit errorReported(tr("Save as preset"), error);
}

Config TrainingTab::runConfig() const {
  Config config = currentConfig();
  // The run file names the family the app settled on, so the runner does not guess again.
  if (!config.family() && family()) config.set("model_family", std::string(toString(*family())));
  return config;
}

std::optional<CommandPreview> TrainingTab::commandPreview(QString* error) const {
  const Config config = runConfig();
  const QString outputDir = QString::fromStdString(asString(config.get("output_dir")));
  if (outputDir.isEmpty()) {
    if (error) *error = tr("Choose an output folder first: the run's TOML file is written there.");
    return std::nullopt;
  }
  const QString name = QString::fromStdString(runOutputName(config, tab_));
  CommandPreview preview;
  preview.program = runnerPath();
  preview.tomlPath = QDir(outputDir).filePath(name + QStringLiteral("-sinter-run.toml"));
  preview.arguments = {QStringLiteral("--config_file"), preview.tomlPath, QStringLiteral("--events"), QStringLiteral("jsonl")};
  preview.arguments << RunPanel::controlArguments() << run_->launchArguments();
  preview.toml = ConfigDocument::toToml(config, tab_, config.family());
  for (const std::string& arg : buildArgv(config)) preview.equivalentArguments << QString::fromStdString(arg);
  preview.equivalentArguments << run_->launchArguments();
  if (const TrainingScript* script = trainingScriptFor(config.family(), tab_, !config.getString("in_json").empty())) {
    if (run_->launchArguments().size() == 2) preview.sdScriptsArguments << QStringLiteral("--num_processes") << run_->launchArguments()[1];
    preview.sdScriptsArguments << QString::fromLatin1(script->name) << QStringLiteral("--config_file") << preview.tomlPath;
  }
  return preview;
}

void TrainingTab::printCommand() {
  QString error;
  const auto preview = commandPreview(&error);
  if (!preview) {
    emit errorReported(tr("Print command"), error);
    return;
  }
  CommandPreviewDialog dialog(*preview, this);
  dialog.exec();
}

bool TrainingTab::checkBeforeRun(const QString& title, std::vector<Diagnostic>* warnings) {
  std::vector<Diagnostic> problems = form_->fieldProblems();
  const Config config = currentConfig();
  if (problems.empty()) {
    for (Diagnostic& d : validateConfig(config))
      if (d.severity == Severity::Error) problems.push_back(d);
      else if (warnings) warnings->push_back(d);
    // A family detected from the checkpoint (validateConfig sees only one that is chosen).
    if (const std::optional<Family> detected = form_->detectedFamily(); detected && !config.family())
      if (std::string problem = tabFamilyProblem(tab_, *detected); !problem.empty())
        problems.push_back(Diagnostic{Severity::Error, {}, "pretrained_model_name_or_path", problem});
  }
  form_->markProblems(problems);
  if (!problems.empty()) {
    emit errorReported(title, tr("Fix the marked fields first:\n%1").arg(QString::fromStdString(formatAll(problems))));
    return false;
  }
  return true;
}

std::optional<Config> TrainingTab::configForQueue(const QString& title) {
  if (!checkBeforeRun(title, nullptr)) return std::nullopt;
  const Config config = runConfig();
  if (config.getString("output_dir").empty()) {
    emit errorReported(title, tr("Choose an output folder first: each queued run writes into its own."));
    return std::nullopt;
  }
  return config;
}

bool TrainingTab::startQueuedRun(const QString& tomlPath, const QStringList& extraArguments, const QString& workingDir) {
  if (isRunning()) return false;
  QStringList arguments{QStringLiteral("--config_file"), tomlPath, QStringLiteral("--events"), QStringLiteral("jsonl")};
  arguments << RunPanel::controlArguments() << run_->launchArguments() << extraArguments;
  run_->startProcess(runnerPath(), arguments, workingDir);
  return true;
}

bool TrainingTab::startRun() {
  if (isRunning()) return false;
  std::vector<Diagnostic> warnings;
  if (!checkBeforeRun(tr("Cannot start"), &warnings)) return false;
  QString error;
  const auto preview = commandPreview(&error);
  if (!preview) {
    emit errorReported(tr("Cannot start"), error);
    return false;
  }
  QDir().mkpath(QFileInfo(preview->tomlPath).absolutePath());
  if (!ConfigDocument::writeText(preview->tomlPath, preview->toml, &error)) {
    emit errorReported(tr("Cannot start"), error);
    return false;
  }
  // The runner starts where the app was started, so relative paths in a config mean the same to
  // both, as with `sinter-runner --config_file` from a shell.
  run_->startProcess(preview->program, preview->arguments, QDir::currentPath());
  for (const Diagnostic& d : warnings) run_->logView()->appendLine(QString::fromStdString(d.format()));
  return true;
}

bool TrainingTab::isRunning() const { return run_->isRunning(); }

void TrainingTab::showCheckpointGrid() { gridWindow_->showForSettings(); }

void TrainingTab::showDatasetCheckWindow() {
  datasetCheckWindow_->show();
  datasetCheckWindow_->raise();
  datasetCheckWindow_->activateWindow();
}

void TrainingTab::checkDataset() {
  showDatasetCheckWindow();
  if (datasetCheck_->isChecking()) return;
  // The check reads the settings as they are, from a file of its own: it needs no output folder,
  // and it leaves the run's file alone. The runner starts where a run would (relative paths).
  const QString folder = QStandardPaths::writableLocation(QStandardPaths::TempLocation);
  datasetCheckToml_ = QDir(folder).filePath(QStringLiteral("sinter-dataset-check-%1-%2.toml")
                                                .arg(QString::fromUtf8(toString(tab_)))
                                                .arg(QCoreApplication::applicationPid()));
  const Config config = runConfig();
  QString error;
  if (!ConfigDocument::writeText(datasetCheckToml_, ConfigDocument::toToml(config, tab_, config.family()), &error)) {
    emit errorReported(tr("Check dataset"), error);
    return;
  }
  datasetCheck_->startCheck(runnerPath(),
                            {QStringLiteral("--config_file"), datasetCheckToml_, QStringLiteral("--check_dataset"), QStringLiteral("--events"),
                             QStringLiteral("jsonl")},
                            QDir::currentPath());
}

}  // namespace sinter::gui

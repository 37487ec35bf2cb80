#include "tools_tab.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSplitter>
#include <QTextCursor>
#include <QVBoxLayout>

#include "app_paths.h"
#include "core/lora_tool_table.h"
#include "log_view.h"
#include "run_controller.h"

namespace sinter::gui {

namespace {

const char* const kSafetensorsFilter = QT_TRANSLATE_NOOP("sinter::gui::ToolsTab", "Safetensors (*.safetensors);;All files (*)");

bool isList(ToolFlagKind kind) {
  return kind == ToolFlagKind::InputFiles || kind == ToolFlagKind::Numbers || kind == ToolFlagKind::Texts;
}

QString sizeText(const QString& path) {
  const QFileInfo info(path);
  return info.exists() ? QLocale().formattedDataSize(info.size()) : QString();
}

}  // namespace

ToolsTab::ToolsTab(QWidget* parent) : QWidget(parent) {
  toolBox_ = new QComboBox(this);
  for (const LoraToolSpec& tool : loraToolTable())
    toolBox_->addItem(tr("%1 (%2)").arg(tr(tool.title), QString::fromUtf8(tool.name)), QString::fromUtf8(tool.name));
  usage_ = new QLabel(this);
  usage_->setWordWrap(true);
  usage_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  showAll_ = new QCheckBox(tr("Show every flag sd-scripts' script takes"), this);
  formHost_ = new QWidget(this);
  runButton_ = new QPushButton(tr("Run tool"), this);
  checkButton_ = new QPushButton(tr("Check a LoRA file..."), this);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  result_ = new QPlainTextEdit(this);
  result_->setReadOnly(true);
  result_->setPlaceholderText(tr("The result: the files' sizes and what the LoRA written holds."));
  log_ = new LogView(this);
  run_ = new RunController(this);
  check_ = new RunController(this);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(runButton_);
  buttons->addWidget(checkButton_);
  buttons->addStretch();
  auto* left = new QWidget(this);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->addWidget(new QLabel(tr("Tool"), this));
  leftLayout->addWidget(toolBox_);
  leftLayout->addWidget(usage_);
  leftLayout->addWidget(showAll_);
  leftLayout->addWidget(formHost_);
  leftLayout->addLayout(buttons);
  leftLayout->addWidget(status_);
  leftLayout->addStretch();
  auto* right = new QSplitter(Qt::Vertical, this);
  right->addWidget(result_);
  right->addWidget(log_);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);

  connect(toolBox_, &QComboBox::currentIndexChanged, this, [this] { rebuildForm(); });
  connect(showAll_, &QCheckBox::toggled, this, [this] { rebuildForm(); });
  connect(runButton_, &QPushButton::clicked, this, &ToolsTab::startTool);
  connect(checkButton_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Check a LoRA file"), QString(), tr(kSafetensorsFilter));
    if (!path.isEmpty()) checkFile(path);
  });
  connect(run_, &RunController::logLine, log_, &LogView::appendLine);
  connect(run_, &RunController::failedToStart, this, [this](const QString& message) {
    status_->setText(tr("The runner did not start: %1").arg(message));
    setRunning(false);
    emit toolFinished(-1);
  });
  connect(run_, &RunController::finished, this, &ToolsTab::onToolFinished);
  connect(check_, &RunController::logLine, this, [this](const QString& text, bool transient) {
    if (!transient) checkLines_ << text;
  });
  connect(check_, &RunController::finished, this, [this](int exitCode, bool) {
    result_->appendPlainText(checkLines_.join(QLatin1Char('\n')));
    result_->moveCursor(QTextCursor::Start);  // the summary (network, ranks, model) first, the tensors' lines below
    emit checkFinished(exitCode);
  });
  rebuildForm();
}

const LoraToolSpec& ToolsTab::tool() const {
  const LoraToolSpec* spec = findLoraTool(toolBox_->currentData().toString().toStdString());
  return spec ? *spec : loraToolTable().front();
}

void ToolsTab::selectTool(const QString& name) {
  const int index = toolBox_->findData(name);
  if (index >= 0) toolBox_->setCurrentIndex(index);
}

QString ToolsTab::selectedTool() const { return toolBox_->currentData().toString(); }

QWidget* ToolsTab::fileEditor(const QString& flag, bool save, bool several, FlagEditor* editor) {
  auto* box = new QWidget(formHost_);
  auto* row = new QHBoxLayout(box);
  row->setContentsMargins(0, 0, 0, 0);
  auto* line = new QLineEdit(box);
  if (several) line->setPlaceholderText(tr("files separated by ;"));
  auto* browse = new QPushButton(tr("Browse..."), box);
  row->addWidget(line, 1);
  row->addWidget(browse);
  connect(browse, &QPushButton::clicked, this, [this, line, save, several] {
    if (several) {
      const QStringList paths = QFileDialog::getOpenFileNames(this, tr("Choose files"), QString(), tr(kSafetensorsFilter));
      if (!paths.isEmpty()) line->setText(paths.join(QLatin1Char(';')));
      return;
    }
    const QString path = save ? QFileDialog::getSaveFileName(this, tr("Save as"), line->text(), tr(kSafetensorsFilter))
                              : QFileDialog::getOpenFileName(this, tr("Choose a file"), line->text(), tr(kSafetensorsFilter));
    if (!path.isEmpty()) line->setText(path);
  });
  connect(line, &QLineEdit::textChanged, this, [this, flag](const QString& text) { values_[flag] = text; });
  editor->get = [line] { return line->text().trimmed(); };
  editor->set = [line](const QString& text) { line->setText(text); };
  return box;
}

void ToolsTab::rebuildForm() {
  delete form_;
  qDeleteAll(formHost_->findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly));
  editors_.clear();
  form_ = new QFormLayout(formHost_);
  const LoraToolSpec& spec = tool();
  usage_->setText(QStringLiteral("sinter-runner %1").arg(QString::fromUtf8(spec.usage)));
  for (const ToolFlagSpec& flag : spec.flags) {
    if (flag.advanced && !showAll_->isChecked()) continue;
    const QString name = QString::fromUtf8(flag.name);
    FlagEditor editor;
    QWidget* widget = nullptr;
    switch (flag.kind) {
      case ToolFlagKind::InputFile:
      case ToolFlagKind::OutputFile:
      case ToolFlagKind::InputFiles:
        widget = fileEditor(name, flag.kind == ToolFlagKind::OutputFile, flag.kind == ToolFlagKind::InputFiles, &editor);
        break;
      case ToolFlagKind::Choice: {
        auto* combo = new QComboBox(formHost_);
        combo->addItem(flag.defaultText[0] ? tr("%1 (default)").arg(QString::fromUtf8(flag.defaultText)) : tr("(not set)"), QString());
        for (const char* choice : flag.choices) combo->addItem(QString::fromUtf8(choice), QString::fromUtf8(choice));
        connect(combo, &QComboBox::currentIndexChanged, this, [this, name, combo] { values_[name] = combo->currentData().toString(); });
        editor.get = [combo] { return combo->currentData().toString(); };
        editor.set = [combo](const QString& text) { combo->setCurrentIndex(std::max(0, combo->findData(text))); };
        widget = combo;
        break;
      }
      case ToolFlagKind::Switch: {
        auto* check = new QCheckBox(formHost_);
        connect(check, &QCheckBox::toggled, this, [this, name](bool on) { values_[name] = on ? QStringLiteral("1") : QString(); });
        editor.get = [check] { return check->isChecked() ? QStringLiteral("1") : QString(); };
        editor.set = [check](const QString& text) { check->setChecked(!text.isEmpty()); };
        widget = check;
        break;
      }
      default: {
        auto* line = new QLineEdit(formHost_);
        if (flag.defaultText[0]) line->setPlaceholderText(tr("default %1").arg(QString::fromUtf8(flag.defaultText)));
        else if (flag.kind == ToolFlagKind::Numbers) line->setPlaceholderText(tr("numbers separated by spaces"));
        connect(line, &QLineEdit::textChanged, this, [this, name](const QString& text) { values_[name] = text; });
        editor.get = [line] { return line->text().trimmed(); };
        editor.set = [line](const QString& text) { line->setText(text); };
        widget = line;
        break;
      }
    }
    widget->setToolTip(tr(flag.help));
    auto* label = new QLabel(flag.required ? tr("--%1 (required)").arg(name) : QStringLiteral("--%1").arg(name), formHost_);
    label->setToolTip(tr(flag.help));
    form_->addRow(label, widget);
    const QString kept = values_.value(name);
    editors_.insert(name, editor);
    if (!kept.isEmpty()) editor.set(kept);
  }
}

void ToolsTab::setFlagValue(const QString& flag, const QString& text) {
  values_[flag] = text;
  if (editors_.contains(flag)) editors_[flag].set(text);
}

QString ToolsTab::flagValue(const QString& flag) const {
  return editors_.contains(flag) ? editors_[flag].get() : values_.value(flag);
}

QStringList ToolsTab::arguments(QString* error) const {
  const LoraToolSpec& spec = tool();
  QStringList args{QString::fromUtf8(spec.name)};
  for (const ToolFlagSpec& flag : spec.flags) {
    const QString name = QString::fromUtf8(flag.name);
    if (flag.advanced && !showAll_->isChecked()) continue;  // folded away: not passed
    const QString value = flagValue(name);
    if (value.isEmpty()) {
      if (flag.required) {
        *error = tr("--%1 is required: %2").arg(name, tr(flag.help));
        return {};
      }
      continue;
    }
    args << QStringLiteral("--%1").arg(name);
    if (flag.kind == ToolFlagKind::Switch) continue;
    if (flag.kind == ToolFlagKind::InputFiles)
      for (const QString& path : value.split(QLatin1Char(';'), Qt::SkipEmptyParts)) args << path.trimmed();
    else if (isList(flag.kind))
      args << value.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
    else
      args << value;
  }
  return args;
}

void ToolsTab::startTool() {
  if (isRunning()) return;
  QString error;
  const QStringList args = arguments(&error);
  if (args.isEmpty()) {
    status_->setText(error);
    return;
  }
  log_->clear();
  result_->clear();
  status_->setText(tr("Running %1...").arg(args.front()));
  setRunning(true);
  run_->start(runnerPath(), args);
}

void ToolsTab::checkFile(const QString& path) {
  checkLines_.clear();
  result_->appendPlainText(tr("%1 (%2):").arg(path, sizeText(path)));
  check_->start(runnerPath(), {QStringLiteral("check_lora_weights"), path});
}

QString ToolsTab::outputFile(bool* isLora) const {
  const LoraToolSpec& spec = tool();
  *isLora = spec.name != std::string("check_lora_weights");
  // merge_lora writes a checkpoint when it is given one.
  if (spec.name == std::string("merge_lora")) *isLora = flagValue(QStringLiteral("sd_model")).isEmpty() && flagValue(QStringLiteral("flux_model")).isEmpty();
  for (const ToolFlagSpec& flag : spec.flags)
    if (flag.kind == ToolFlagKind::OutputFile) return flagValue(QString::fromUtf8(flag.name));
  return {};
}

void ToolsTab::onToolFinished(int exitCode, bool crashed) {
  setRunning(false);
  log_->flush();
  if (crashed || exitCode != 0) {
    status_->setText(crashed ? tr("The tool crashed.") : tr("The tool failed (exit %1); the log says why.").arg(exitCode));
    emit toolFinished(crashed ? -1 : exitCode);
    return;
  }
  bool isLora = false;
  const QString out = outputFile(&isLora);
  status_->setText(out.isEmpty() ? tr("Done.") : tr("Done: wrote %1 (%2).").arg(out, sizeText(out)));
  // The inputs' sizes beside the output's, then what the LoRA written holds.
  for (const ToolFlagSpec& flag : tool().flags) {
    if (flag.kind != ToolFlagKind::InputFile && flag.kind != ToolFlagKind::InputFiles) continue;
    for (const QString& path : flagValue(QString::fromUtf8(flag.name)).split(QLatin1Char(';'), Qt::SkipEmptyParts))
      result_->appendPlainText(tr("input --%1: %2 (%3)").arg(QString::fromUtf8(flag.name), path.trimmed(), sizeText(path.trimmed())));
  }
  emit toolFinished(0);
  if (isLora && !out.isEmpty() && QFileInfo::exists(out)) checkFile(out);
}

bool ToolsTab::isRunning() const { return run_->isRunning(); }

void ToolsTab::setRunning(bool running) {
  runButton_->setEnabled(!running);
  toolBox_->setEnabled(!running);
  emit runningChanged(running);
}

QString ToolsTab::statusText() const { return status_->text(); }
QString ToolsTab::resultText() const { return result_->toPlainText(); }

}  // namespace sinter::gui

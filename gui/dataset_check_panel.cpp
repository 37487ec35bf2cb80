#include "dataset_check_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTextDocumentFragment>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "log_view.h"
#include "run_controller.h"

namespace sinter::gui {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

DatasetCheckPanel::DatasetCheckPanel(QWidget* parent) : QWidget(parent) {
  summary_ = new QLabel(tr("No dataset check yet: “Check again” reads the dataset as a run would."), this);
  summary_->setObjectName(QStringLiteral("datasetCheckSummary"));
  summary_->setWordWrap(true);
  summary_->setTextFormat(Qt::RichText);  // a refusal in bold; every text put in is escaped
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  again_ = new QPushButton(tr("Check again"), this);
  again_->setToolTip(tr("Read the dataset of the settings as they are now, as a run would, and decode every image"));

  tree_ = new QTreeWidget(this);
  tree_->setObjectName(QStringLiteral("datasetCheckTree"));
  tree_->setColumnCount(2);
  tree_->setHeaderLabels({tr("File"), tr("Finding")});
  tree_->header()->setSectionResizeMode(0, QHeaderView::Interactive);
  tree_->header()->resizeSection(0, 420);
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);

  log_ = new LogView(this);
  log_->setVisible(false);  // the runner's log of a check run from here; a run's report has its own
  controller_ = new RunController(this);

  auto* top = new QHBoxLayout;
  top->addWidget(summary_, 1);
  top->addWidget(again_, 0, Qt::AlignTop);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(tree_);
  split->addWidget(log_);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  split->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(split, 1);

  connect(again_, &QPushButton::clicked, this, &DatasetCheckPanel::checkRequested);
  connect(controller_, &RunController::eventReceived, this, &DatasetCheckPanel::onEvent);
  connect(controller_, &RunController::logLine, log_, &LogView::appendLine);
  connect(controller_, &RunController::finished, this, &DatasetCheckPanel::onFinished);
  connect(controller_, &RunController::failedToStart, this, [this](const QString& message) {
    summary_->setText(message.toHtmlEscaped());
    again_->setEnabled(true);
    emit checkFinished(-1);
  });
}

void DatasetCheckPanel::startCheck(const QString& program, const QStringList& arguments, const QString& workingDir) {
  if (isChecking()) return;
  clear();
  reportSeen_ = false;
  runnerErrors_.clear();
  summary_->setText(tr("Checking the dataset: every image is read and decoded…").toHtmlEscaped());
  log_->setVisible(true);
  again_->setEnabled(false);
  controller_->start(program, arguments, workingDir);
}

bool DatasetCheckPanel::isChecking() const { return controller_->isRunning(); }

void DatasetCheckPanel::clear() {
  tree_->clear();
  log_->clear();
}

void DatasetCheckPanel::onEvent(const events::Event& event) {
  if (const auto* report = std::get_if<events::DatasetCheck>(&event)) {
    reportSeen_ = true;
    fillReport(*report);
  } else if (const auto* error = std::get_if<events::Error>(&event)) {
    runnerErrors_ << q(error->message);
    log_->appendLine(tr("Error: %1").arg(q(error->message)));
  } else if (const auto* warning = std::get_if<events::Warning>(&event)) {
    log_->appendLine(tr("Warning: %1").arg(q(warning->message)));
  }
}

void DatasetCheckPanel::onFinished(int exitCode, bool crashed) {
  log_->flush();
  again_->setEnabled(true);
  if (crashed) summary_->setText(tr("The runner crashed during the check (exit code %1); its log is below.").arg(exitCode).toHtmlEscaped());
  else if (!reportSeen_)
    summary_->setText(tr("The dataset could not be checked (exit code %1): %2")
                          .arg(exitCode)
                          .arg(runnerErrors_.isEmpty() ? tr("see the runner's log below") : runnerErrors_.join(QStringLiteral("; ")))
                          .toHtmlEscaped());
  emit checkFinished(crashed ? -1 : exitCode);
}

QTreeWidgetItem* DatasetCheckPanel::addSection(const QString& title, int count) {
  auto* section = new QTreeWidgetItem(tree_, {QStringLiteral("%1 (%2)").arg(title).arg(count)});
  section->setFirstColumnSpanned(true);
  QFont bold = section->font(0);
  bold.setBold(true);
  section->setFont(0, bold);
  if (count == 0) section->setDisabled(true);
  return section;
}

void DatasetCheckPanel::addFiles(const QString& title, const std::vector<events::DatasetFile>& files) {
  QTreeWidgetItem* section = addSection(title, static_cast<int>(files.size()));
  for (const events::DatasetFile& f : files) {
    auto* item = new QTreeWidgetItem(section, {q(f.path), q(f.reason)});
    item->setToolTip(0, q(f.path));
    item->setToolTip(1, q(f.reason));
  }
  section->setExpanded(!files.empty());
}

void DatasetCheckPanel::showReport(const events::DatasetCheck& report) {
  // A run's report: the log of an earlier check here says nothing about it.
  log_->clear();
  log_->setVisible(false);
  fillReport(report);
}

void DatasetCheckPanel::fillReport(const events::DatasetCheck& r) {
  tree_->clear();
  const int findings = static_cast<int>(r.missing_captions.size() + r.empty_captions.size() + r.duplicates.size() +
                                        r.too_small.size() + r.unreadable.size());
  QString text = findings == 0 ? tr("No problems found in %n image(s).", nullptr, static_cast<int>(r.images))
                               : tr("%n image(s) in use;", nullptr, static_cast<int>(r.images)) + QLatin1Char(' ') +
                                     tr("%n finding(s) below.", nullptr, findings);
  if (!r.refusals.empty()) text = QStringLiteral("<b>%1</b> ").arg(tr("A run would refuse this dataset.").toHtmlEscaped()) + text.toHtmlEscaped();
  else text = text.toHtmlEscaped();
  if (!r.contents_compared) text += QLatin1Char(' ') + tr("Duplicates were not looked for.").toHtmlEscaped();
  if (!r.pixels_decoded) text += QLatin1Char(' ') + tr("Only the images' headers were read (“Check again” decodes every image).").toHtmlEscaped();
  summary_->setText(text);

  if (!r.refusals.empty()) {
    QTreeWidgetItem* section = addSection(tr("Why a run would refuse it"), static_cast<int>(r.refusals.size()));
    for (const std::string& why : r.refusals) {
      auto* item = new QTreeWidgetItem(section, {q(why)});
      item->setFirstColumnSpanned(true);
    }
    section->setExpanded(true);
  }
  addFiles(tr("Images without a caption file"), r.missing_captions);
  addFiles(tr("Empty captions"), r.empty_captions);
  QTreeWidgetItem* duplicates = addSection(tr("Files with the same content"), static_cast<int>(r.duplicates.size()));
  for (const auto& group : r.duplicates) {
    QStringList files;
    for (const std::string& f : group) files << q(f);
    auto* item = new QTreeWidgetItem(duplicates, {files.value(0), tr("same content as %1").arg(files.mid(1).join(QStringLiteral(", ")))});
    item->setToolTip(0, files.join(QLatin1Char('\n')));
  }
  duplicates->setExpanded(!r.duplicates.empty());
  addFiles(tr("Smaller than the smallest bucket"), r.too_small);
  addFiles(tr("Cannot be read"), r.unreadable);

  QTreeWidgetItem* folders = addSection(tr("Folders: images × repeats"), static_cast<int>(r.folders.size()));
  for (const events::DatasetFolder& f : r.folders) {
    QString what = tr("%1 × %2 = %3").arg(f.images).arg(f.repeats).arg(f.with_repeats);
    if (f.regularization) what += QLatin1Char(' ') + tr("(regularisation images)");
    if (f.validation > 0) what += QLatin1Char(' ') + tr("(%n held out for validation)", nullptr, static_cast<int>(f.validation));
    new QTreeWidgetItem(folders, {q(f.path), what});
  }
  folders->setExpanded(true);
  QTreeWidgetItem* buckets = addSection(tr("Buckets"), static_cast<int>(r.buckets.size()));
  for (const events::DatasetBucket& b : r.buckets)
    new QTreeWidgetItem(buckets, {tr("%1 × %2").arg(b.width).arg(b.height),
                                  tr("%n image(s)", nullptr, static_cast<int>(b.images)) + QStringLiteral(", ") +
                                      tr("%n with repeats", nullptr, static_cast<int>(b.with_repeats))});
  buckets->setExpanded(true);
  if (!r.warnings.empty()) {
    QTreeWidgetItem* notes = addSection(tr("What reading the dataset said"), static_cast<int>(r.warnings.size()));
    for (const std::string& w : r.warnings) {
      auto* item = new QTreeWidgetItem(notes, {q(w)});
      item->setFirstColumnSpanned(true);
    }
  }
}

QString DatasetCheckPanel::summaryText() const { return QTextDocumentFragment::fromHtml(summary_->text()).toPlainText(); }

QString DatasetCheckPanel::reportText() const {
  QStringList lines;
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    const QTreeWidgetItem* section = tree_->topLevelItem(i);
    lines << section->text(0);
    for (int k = 0; k < section->childCount(); ++k) {
      const QTreeWidgetItem* item = section->child(k);
      lines << (item->text(1).isEmpty() ? QStringLiteral("  %1").arg(item->text(0))
                                        : QStringLiteral("  %1: %2").arg(item->text(0), item->text(1)));
    }
  }
  return lines.join(QLatin1Char('\n'));
}

}  // namespace sinter::gui

#include "sample_gallery.h"

#include <QComboBox>
#include <QImageReader>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>

#include "sample_viewer.h"

namespace sinter::gui {

namespace {

constexpr int kSampleRole = Qt::UserRole;  // the sample's position in its run

// The image read at thumbnail size, or a gray tile saying it cannot be read.
QIcon thumbnailOf(const QString& path, QString* problem) {
  QImageReader reader(path);
  const QSize full = reader.size();
  if (full.isValid()) reader.setScaledSize(full.scaled(SampleGallery::kThumbnailSize, SampleGallery::kThumbnailSize, Qt::KeepAspectRatio));
  const QImage image = reader.read();
  if (!image.isNull()) return QIcon(QPixmap::fromImage(image));
  *problem = reader.errorString();
  QPixmap tile(SampleGallery::kThumbnailSize, SampleGallery::kThumbnailSize);
  tile.fill(QColor(0x55, 0x55, 0x55));
  QPainter painter(&tile);
  painter.setPen(Qt::white);
  painter.drawText(tile.rect().adjusted(6, 6, -6, -6), Qt::AlignCenter | Qt::TextWordWrap, SampleGallery::tr("Image not found"));
  return QIcon(tile);
}

}  // namespace

SampleGallery::SampleGallery(QWidget* parent) : QWidget(parent) {
  runs_ = new QComboBox(this);
  runs_->setToolTip(tr("Sample images of this session's runs"));
  runs_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  list_ = new QListWidget(this);
  list_->setViewMode(QListView::IconMode);
  list_->setIconSize(QSize(kThumbnailSize, kThumbnailSize));
  list_->setGridSize(QSize(kThumbnailSize + 16, kThumbnailSize + 28));
  // One row of thumbnails with their captions always fits.
  list_->setMinimumHeight(kThumbnailSize + 40);
  list_->setResizeMode(QListView::Adjust);
  list_->setMovement(QListView::Static);
  list_->setWordWrap(true);
  list_->setUniformItemSizes(true);
  empty_ = new QLabel(this);
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);

  auto* heading = new QLabel(tr("Sample images"), this);
  gridButton_ = new QPushButton(tr("Checkpoint grid…"), this);
  gridButton_->setObjectName(QStringLiteral("checkpointGridButton"));
  gridButton_->setToolTip(tr("Compare the saved files: the sample prompts rendered for the base model and each file, side by side"));
  auto* top = new QHBoxLayout;
  top->addWidget(heading);
  top->addStretch(1);
  top->addWidget(gridButton_);
  top->addWidget(runs_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(list_, 1);
  layout->addWidget(empty_);

  connect(runs_, qOverload<int>(&QComboBox::currentIndexChanged), this, &SampleGallery::showRun);
  connect(gridButton_, &QPushButton::clicked, this, &SampleGallery::checkpointGridRequested);
  connect(list_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) { openSample(list_->row(item)); });
  connect(list_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) { openSample(list_->row(item)); });
  updateEmptyText();
}

void SampleGallery::startRun() {
  history_.startRun(QDateTime::currentDateTime());
  const SampleRun& run = history_.runs().back();
  runs_->addItem(tr("Run %1 (%2)").arg(history_.runs().size()).arg(run.started.toString(QStringLiteral("HH:mm"))));
  runs_->setCurrentIndex(runs_->count() - 1);  // shows the new, empty run
}

void SampleGallery::addSample(const events::Sample& sample) {
  if (history_.runs().isEmpty()) startRun();
  history_.add(sample);
  // Only the run on display gains a thumbnail; the others show theirs when chosen.
  if (runs_->currentIndex() == runs_->count() - 1) insertThumbnail(sample);
  updateEmptyText();
}

void SampleGallery::showRun(int run) {
  list_->clear();
  if (run >= 0 && run < history_.runs().size())
    for (const events::Sample& s : history_.runs()[run].samples) insertThumbnail(s);
  updateEmptyText();
}

void SampleGallery::insertThumbnail(const events::Sample& sample) {
  const QString path = QString::fromStdString(sample.path), prompt = QString::fromStdString(sample.prompt);
  QString problem;
  const QIcon icon = thumbnailOf(path, &problem);
  const QString when = sample.epoch > 0 ? tr("epoch %1, step %2").arg(sample.epoch).arg(sample.step) : tr("step %1").arg(sample.step);
  auto* item = new QListWidgetItem(icon, when);
  QString tip = tr("%1\nprompt %2: %3\n%4").arg(when).arg(sample.index).arg(prompt, path);
  if (!problem.isEmpty()) tip += QStringLiteral("\n") + tr("The image cannot be read: %1").arg(problem);
  item->setToolTip(tip);
  // Position in the run's list, so a click finds the sample whatever the display order.
  item->setData(kSampleRole, list_->count());
  list_->insertItem(0, item);  // newest first
}

void SampleGallery::openSample(int row) {
  const int run = runs_->currentIndex();
  QListWidgetItem* item = list_->item(row);
  if (!item || run < 0 || run >= history_.runs().size()) return;
  const events::Sample& sample = history_.runs()[run].samples.at(item->data(kSampleRole).toInt());
  if (viewer_) viewer_->deleteLater();
  viewer_ = new SampleViewer(sample, this);
  viewer_->setAttribute(Qt::WA_DeleteOnClose, false);
  viewer_->show();
}

void SampleGallery::updateEmptyText() {
  const bool none = list_->count() == 0;
  empty_->setVisible(none);
  list_->setVisible(!none);
  empty_->setText(history_.runs().isEmpty() ? tr("Sample images appear here while a run with sample prompts trains.")
                                            : tr("No sample images in this run yet."));
}

}  // namespace sinter::gui

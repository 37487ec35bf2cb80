#include "sample_viewer.h"

#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QImageReader>
#include <QLabel>
#include <QPushButton>
#include <QUrl>
#include <QVBoxLayout>

namespace sinter::gui {

SampleViewer::SampleViewer(const events::Sample& sample, QWidget* parent) : QDialog(parent) {
  const QString path = QString::fromStdString(sample.path);
  setWindowTitle(tr("Sample at step %1").arg(sample.step));
  image_ = new QLabel(this);
  image_->setAlignment(Qt::AlignCenter);
  image_->setMinimumSize(256, 256);
  QImageReader reader(path);
  const QImage image = reader.read();
  if (image.isNull()) image_->setText(tr("The image %1 cannot be read: %2").arg(path, reader.errorString()));
  else original_ = QPixmap::fromImage(image);

  QString about = tr("Step %1").arg(sample.step);
  if (sample.epoch > 0) about += tr(", end of epoch %1").arg(sample.epoch);
  about += tr(", prompt %1").arg(sample.index);
  auto* prompt = new QLabel(QString::fromStdString(sample.prompt), this);
  prompt->setWordWrap(true);
  prompt->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* details = new QLabel(about + QStringLiteral("\n") + path, this);
  details->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  QPushButton* folder = buttons->addButton(tr("Open folder"), QDialogButtonBox::ActionRole);
  connect(folder, &QPushButton::clicked, this,
          [path] { QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(path).absolutePath())); });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(image_, 1);
  layout->addWidget(prompt);
  layout->addWidget(details);
  layout->addWidget(buttons);
  resize(720, 800);
  showScaled();
}

void SampleViewer::resizeEvent(QResizeEvent* event) {
  QDialog::resizeEvent(event);
  showScaled();
}

void SampleViewer::showScaled() {
  if (original_.isNull()) return;
  // Never enlarged past 4x (tiny demo images would blur into mush), always fitted to the label.
  const QSize room = image_->size().boundedTo(original_.size() * 4);
  image_->setPixmap(original_.scaled(room, Qt::KeepAspectRatio, original_.width() < 256 ? Qt::FastTransformation : Qt::SmoothTransformation));
}

}  // namespace sinter::gui

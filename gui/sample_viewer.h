#pragma once
// One sample image shown large (scaled to the window), with its prompt, step and file, and a
// button that opens the folder it is in.
#include <QDialog>

#include "core/events.h"

class QLabel;

namespace sinter::gui {

class SampleViewer : public QDialog {
  Q_OBJECT
 public:
  explicit SampleViewer(const events::Sample& sample, QWidget* parent = nullptr);
  const QLabel* imageLabel() const { return image_; }
  bool imageLoaded() const { return !original_.isNull(); }

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void showScaled();
  QLabel* image_;
  QPixmap original_;
};

}  // namespace sinter::gui

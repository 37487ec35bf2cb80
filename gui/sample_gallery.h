#pragma once
// The latest sample images of a run as thumbnails (newest first), beside the loss chart. Each run
// of the session keeps its own; a combo box goes back to earlier ones. Clicking a thumbnail opens
// it large (SampleViewer).
#include <QWidget>

#include "sample_history.h"

class QComboBox;
class QLabel;
class QListWidget;
class QListWidgetItem;
class QPushButton;

namespace sinter::gui {

class SampleViewer;

class SampleGallery : public QWidget {
  Q_OBJECT
 public:
  explicit SampleGallery(QWidget* parent = nullptr);

  void startRun();
  void addSample(const events::Sample& sample);

  const SampleHistory& history() const { return history_; }
  QComboBox* runChooser() const { return runs_; }
  QListWidget* thumbnails() const { return list_; }
  // "Checkpoint grid…": the tab opens its Checkpoint grid window (checkpoint_grid_window.h).
  QPushButton* checkpointGridButton() const { return gridButton_; }
  // The viewer the last click opened (null before any).
  SampleViewer* lastViewer() const { return viewer_; }
  void openSample(int row);

  static constexpr int kThumbnailSize = 96;

 signals:
  void checkpointGridRequested();

 private:
  void showRun(int run);
  void insertThumbnail(const events::Sample& sample);
  void updateEmptyText();

  SampleHistory history_;
  QComboBox* runs_;
  QListWidget* list_;
  QLabel* empty_;
  QPushButton* gridButton_;
  SampleViewer* viewer_ = nullptr;
};

}  // namespace sinter::gui

#pragma once
// A checkpoint grid shown with its headers (checkpoint_grid_layout.h): the picture at full size, a
// column header above each prompt's column and a row header left of each model's row (the base
// model, then each saved file with the step and epoch it was saved at). A header's tooltip says all
// of it (the prompt's negative prompt, seed, size, steps, scale and sampler; the file's path).
#include <QStringList>
#include <QWidget>

#include "checkpoint_grid_layout.h"

namespace sinter::gui {

class CheckpointGridView : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kRowHeaderWidth = 200;
  static constexpr int kColumnHeaderHeight = 56;

  explicit CheckpointGridView(QWidget* parent = nullptr);

  void setGrid(const CheckpointGridImage& grid);
  void clear();
  bool hasGrid() const { return !grid_.image.isNull(); }
  const CheckpointGridImage& grid() const { return grid_; }

  // The headers as drawn: one per row, one per column.
  QStringList rowLabels() const { return rowLabels_; }
  QStringList columnLabels() const { return columnLabels_; }
  // Where the picture's cell (row, column) is drawn, in the view's coordinates.
  QRect cellRect(int row, int column) const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override { return sizeHint(); }

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  QString rowToolTip(int row) const;
  QString columnToolTip(int column) const;

  CheckpointGridImage grid_;
  QStringList rowLabels_, columnLabels_;
};

// A row's header: "Base model (step 0)", or the file's name with the step and epoch it was saved at.
QString checkpointGridRowLabel(const CheckpointGridRow& row);

}  // namespace sinter::gui

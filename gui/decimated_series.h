#pragma once
// One chart line's full data and the few points that draw it: a chart of a million steps is drawn
// from at most two points per pixel column (the lowest and the highest of the steps that fall in
// it, so every spike stays visible), and a zoomed-in range of a few hundred steps from all of them.
#include <QList>
#include <QPointF>
#include <vector>

namespace sinter::gui {

class DecimatedSeries {
 public:
  struct View {
    QList<QPointF> points;  // in step order
    double minY = 0, maxY = 0;
    bool empty = true;  // no point inside the range (minY/maxY mean nothing then)
  };

  void append(double x, double y);
  void clear();
  int size() const { return static_cast<int>(points_.size()); }
  const std::vector<QPointF>& points() const { return points_; }

  // The points to draw for steps in [x0, x1] over `columns` pixel columns: every point there when
  // they are at most two per column, else each column's lowest and highest; and the nearest point
  // outside on either side, so the line runs on to the plot's edges. minY/maxY: of the points inside.
  View visible(double x0, double x1, int columns) const;

 private:
  std::vector<QPointF> points_;
  bool sorted_ = true;  // steps arrive in order; a runner that sends them otherwise costs a full scan
};

}  // namespace sinter::gui

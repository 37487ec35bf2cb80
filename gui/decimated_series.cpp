#include "decimated_series.h"

#include <algorithm>

namespace sinter::gui {

void DecimatedSeries::append(double x, double y) {
  if (!points_.empty() && x < points_.back().x()) sorted_ = false;
  points_.emplace_back(x, y);
}

void DecimatedSeries::clear() {
  points_.clear();
  points_.shrink_to_fit();
  sorted_ = true;
}

DecimatedSeries::View DecimatedSeries::visible(double x0, double x1, int columns) const {
  View view;
  columns = std::max(1, columns);
  const auto byX = [](const QPointF& p, double x) { return p.x() < x; };
  // The points to look at: by binary search when sorted, else all of them.
  size_t first = 0, last = points_.size();
  if (sorted_) {
    first = static_cast<size_t>(std::lower_bound(points_.begin(), points_.end(), x0, byX) - points_.begin());
    last = static_cast<size_t>(std::upper_bound(points_.begin(), points_.end(), x1,
                                                [](double x, const QPointF& p) { return x < p.x(); }) -
                               points_.begin());
  }
  long long left = -1, right = -1;  // the nearest points outside the range
  if (sorted_) {
    if (first > 0) left = static_cast<long long>(first) - 1;
    if (last < points_.size()) right = static_cast<long long>(last);
  }
  // Each column's lowest and highest point, as indices into points_.
  std::vector<long long> low(columns, -1), high(columns, -1);
  const double scale = x1 > x0 ? columns / (x1 - x0) : 0;
  size_t inside = 0;
  for (size_t i = first; i < last; ++i) {
    const QPointF& p = points_[i];
    if (p.x() < x0) {
      if (left < 0 || p.x() > points_[left].x()) left = static_cast<long long>(i);
      continue;
    }
    if (p.x() > x1) {
      if (right < 0 || p.x() < points_[right].x()) right = static_cast<long long>(i);
      continue;
    }
    ++inside;
    const int c = std::clamp(static_cast<int>((p.x() - x0) * scale), 0, columns - 1);
    if (low[c] < 0 || p.y() < points_[low[c]].y()) low[c] = static_cast<long long>(i);
    if (high[c] < 0 || p.y() > points_[high[c]].y()) high[c] = static_cast<long long>(i);
    if (view.empty) view.minY = view.maxY = p.y();
    view.minY = std::min(view.minY, p.y());
    view.maxY = std::max(view.maxY, p.y());
    view.empty = false;
  }
  if (left >= 0) view.points.append(points_[left]);
  if (inside <= 2 * static_cast<size_t>(columns)) {
    // Few enough to draw every one.
    const size_t start = view.points.size();
    for (size_t i = first; i < last; ++i)
      if (points_[i].x() >= x0 && points_[i].x() <= x1) view.points.append(points_[i]);
    if (!sorted_)
      std::stable_sort(view.points.begin() + start, view.points.end(),
                       [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
  } else {
    for (int c = 0; c < columns; ++c) {
      if (low[c] < 0) continue;
      const QPointF& a = points_[low[c]];
      const QPointF& b = points_[high[c]];
      if (low[c] == high[c]) {
        view.points.append(a);
      } else if (a.x() <= b.x()) {
        view.points.append(a);
        view.points.append(b);
      } else {
        view.points.append(b);
        view.points.append(a);
      }
    }
  }
  if (right >= 0) view.points.append(points_[right]);
  return view;
}

}  // namespace sinter::gui

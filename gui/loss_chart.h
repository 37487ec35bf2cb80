#pragma once
// Loss per step, raw and smoothed (an exponential moving average, as TensorBoard draws it), and the
// validation loss (validation_split) where the run computes it, as points of a series of its own.
// Points arrive as fast as the runner sends them and are kept in full; the chart redraws from them
// a few times a second, decimated to at most two points per pixel column (DecimatedSeries). Dragging
// zooms into a range of steps, drawn from all of its points; a right click shows the whole run again.
// save_best_k's kept files and early_stop_patience's end are marked on the validation points.
#include <QChartView>
#include <QPointF>
#include <QStringList>
#include <QTimer>
#include <map>
#include <optional>

#include "decimated_series.h"

class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace sinter::gui {

class LossChart : public QChartView {
  Q_OBJECT
 public:
  static constexpr int kRefreshMs = 100;

  explicit LossChart(QWidget* parent = nullptr);
  void addPoint(double step, double loss);
  // One validation pass's mean loss after `step`; its legend entry shows from the first one on.
  void addValidationPoint(double step, double loss);
  // A save_best_k file saved at (step, loss), and the files kept after it (`kept`, the runner's
  // list): the kept ones are marked, a file that dropped out is not any more.
  void addBestSave(const QString& path, double step, double loss, const QStringList& kept);
  // early_stop_patience ended the run after `step`: marked on the last validation point.
  void markEarlyStop(double step);
  QVector<QPointF> bestPoints() const;  // the kept files' points, in the runner's order
  std::optional<QPointF> earlyStopPoint() const { return earlyStop_; }
  void clear();
  int pointCount() const;             // training losses received
  int validationPointCount() const;   // validation losses received
  int shownPointCount() const;        // training losses drawn now (decimated)
  double smoothedLast() const { return smoothed_; }
  void setSmoothing(double weight) { smoothing_ = weight; }
  // The step axis spans the whole run when its length is known.
  void setTotalSteps(double steps) {
    totalSteps_ = steps;
    scheduleRefresh();
  }
  // Draws what has arrived now (also done by a timer).
  void refresh();
  bool isZoomed() const { return zoomed_; }
  // Back to the whole run, following new steps.
  void resetZoom();

 protected:
  void mouseReleaseEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void scheduleRefresh();
  void setAxisRange(QValueAxis* axis, double low, double high);
  void showMarks();

  QLineSeries* raw_;
  QLineSeries* smooth_;
  QLineSeries* validation_;
  QScatterSeries* best_;
  QScatterSeries* earlyStopMark_;
  QValueAxis* axisX_;
  QValueAxis* axisY_;
  DecimatedSeries rawData_, smoothData_, validationData_;
  QTimer refreshTimer_;
  double smoothing_ = 0.9;
  double smoothed_ = 0;
  double maxX_ = 0, totalSteps_ = 0;
  std::map<QString, QPointF> bestFiles_;  // every best file this run saved, by path
  QStringList keptBest_;
  std::optional<QPointF> lastValidation_, earlyStop_;
  bool zoomed_ = false;        // the user chose a step range: new points do not move it
  bool settingRange_ = false;  // the chart itself is moving an axis (not the user zooming)
};

}  // namespace sinter::gui

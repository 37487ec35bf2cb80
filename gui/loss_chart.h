#pragma once
// Loss per step, raw and smoothed (an exponential moving average, as TensorBoard draws it), and the
// validation loss (validation_split) where the run computes it, as points of a series of its own.
#include <QChartView>
#include <QTimer>

class QLineSeries;
class QValueAxis;

namespace sinter::gui {

class LossChart : public QChartView {
  Q_OBJECT
 public:
  explicit LossChart(QWidget* parent = nullptr);
  void addPoint(double step, double loss);
  // One validation pass's mean loss after `step`; its legend entry shows from the first one on.
  void addValidationPoint(double step, double loss);
  void clear();
  int pointCount() const;
  int validationPointCount() const;
  double smoothedLast() const { return smoothed_; }
  void setSmoothing(double weight) { smoothing_ = weight; }
  // The step axis spans the whole run when its length is known.
  void setTotalSteps(double steps) {
    totalSteps_ = steps;
    updateAxes();
  }

 private:
  void updateAxes();
  void extendRange(double step, double loss);

  QLineSeries* raw_;
  QLineSeries* smooth_;
  QLineSeries* validation_;
  QValueAxis* axisX_;
  QValueAxis* axisY_;
  QTimer axisTimer_;
  double smoothing_ = 0.9;
  double smoothed_ = 0;
  double minY_ = 0, maxY_ = 0, maxX_ = 0, totalSteps_ = 0;
  bool empty_ = true;
};

}  // namespace sinter::gui

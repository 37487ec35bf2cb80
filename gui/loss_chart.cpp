#include "loss_chart.h"

#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMouseEvent>
#include <QScatterSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace sinter::gui {

LossChart::LossChart(QWidget* parent) : QChartView(parent) {
  auto* chart = new QChart;
  chart->legend()->setAlignment(Qt::AlignTop);
  chart->setMargins(QMargins(4, 4, 4, 4));
  raw_ = new QLineSeries(chart);
  raw_->setName(tr("Loss"));
  QPen rawPen(QColor(120, 160, 220, 140));
  rawPen.setWidthF(1.0);
  raw_->setPen(rawPen);
  smooth_ = new QLineSeries(chart);
  smooth_->setName(tr("Smoothed"));
  QPen smoothPen(QColor(220, 90, 30));
  smoothPen.setWidthF(2.0);
  smooth_->setPen(smoothPen);
  validation_ = new QLineSeries(chart);
  validation_->setName(tr("Validation loss"));
  QPen validationPen(QColor(40, 150, 70));
  validationPen.setWidthF(2.0);
  validation_->setPen(validationPen);
  validation_->setPointsVisible(true);  // passes are far apart: each one a visible point
  best_ = new QScatterSeries(chart);
  best_->setName(tr("Kept best (validation)"));
  best_->setMarkerShape(QScatterSeries::MarkerShapeStar);
  best_->setMarkerSize(16);
  best_->setColor(QColor(230, 170, 0));
  best_->setBorderColor(QColor(120, 80, 0));
  earlyStopMark_ = new QScatterSeries(chart);
  earlyStopMark_->setName(tr("Early stop"));
  earlyStopMark_->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  earlyStopMark_->setMarkerSize(12);
  earlyStopMark_->setColor(QColor(200, 30, 30));
  chart->addSeries(raw_);
  chart->addSeries(smooth_);
  chart->addSeries(validation_);
  chart->addSeries(best_);
  chart->addSeries(earlyStopMark_);
  axisX_ = new QValueAxis(chart);
  axisX_->setLabelFormat(QStringLiteral("%.0f"));
  axisY_ = new QValueAxis(chart);
  axisY_->setLabelFormat(QStringLiteral("%.3g"));
  chart->addAxis(axisX_, Qt::AlignBottom);
  chart->addAxis(axisY_, Qt::AlignLeft);
  for (QXYSeries* s : std::initializer_list<QXYSeries*>{raw_, smooth_, validation_, best_, earlyStopMark_}) {
    s->attachAxis(axisX_);
    s->attachAxis(axisY_);
  }
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setMinimumSize(320, 160);
  setRubberBand(QChartView::HorizontalRubberBand);
  setToolTip(tr("Drag across steps to zoom in; right-click to see the whole run again."));
  connect(axisX_, &QValueAxis::rangeChanged, this, [this] {
    if (settingRange_) return;
    zoomed_ = true;  // the rubber band (or a wheel) moved the step axis
    scheduleRefresh();
  });
  // A flood of points costs one redraw per tick, not one per point.
  refreshTimer_.setSingleShot(true);
  refreshTimer_.setInterval(kRefreshMs);
  connect(&refreshTimer_, &QTimer::timeout, this, &LossChart::refresh);
  clear();
}

void LossChart::addPoint(double step, double loss) {
  if (!std::isfinite(loss) || !std::isfinite(step)) return;
  smoothed_ = rawData_.size() == 0 ? loss : smoothing_ * smoothed_ + (1.0 - smoothing_) * loss;
  rawData_.append(step, loss);
  smoothData_.append(step, smoothed_);
  maxX_ = std::max(maxX_, step);
  scheduleRefresh();
}

void LossChart::addValidationPoint(double step, double loss) {
  if (!std::isfinite(loss) || !std::isfinite(step)) return;
  validationData_.append(step, loss);
  lastValidation_ = QPointF(step, loss);
  maxX_ = std::max(maxX_, step);
  for (QLegendMarker* marker : chart()->legend()->markers(validation_)) marker->setVisible(true);
  scheduleRefresh();
}

void LossChart::addBestSave(const QString& path, double step, double loss, const QStringList& kept) {
  if (std::isfinite(step) && std::isfinite(loss)) bestFiles_[path] = QPointF(step, loss);
  keptBest_ = kept;
  showMarks();
}

void LossChart::markEarlyStop(double step) {
  // The pass that ended the run is the last one (at `step`); without one, at the step alone.
  earlyStop_ = lastValidation_ ? *lastValidation_ : QPointF(step, 0);
  showMarks();
}

QVector<QPointF> LossChart::bestPoints() const {
  QVector<QPointF> points;
  for (const QString& path : keptBest_)
    if (auto it = bestFiles_.find(path); it != bestFiles_.end()) points.append(it->second);
  return points;
}

// The marks are few: drawn in full, each a legend entry once there is one.
void LossChart::showMarks() {
  best_->replace(bestPoints());
  earlyStopMark_->replace(earlyStop_ ? QVector<QPointF>{*earlyStop_} : QVector<QPointF>{});
  for (QLegendMarker* marker : chart()->legend()->markers(best_)) marker->setVisible(best_->count() > 0);
  for (QLegendMarker* marker : chart()->legend()->markers(earlyStopMark_)) marker->setVisible(earlyStop_.has_value());
}

void LossChart::scheduleRefresh() {
  if (!refreshTimer_.isActive()) refreshTimer_.start();
}

void LossChart::setAxisRange(QValueAxis* axis, double low, double high) {
  settingRange_ = true;
  axis->setRange(low, high);
  settingRange_ = false;
}

void LossChart::refresh() {
  refreshTimer_.stop();
  if (!zoomed_) {
    setAxisRange(axisX_, 0, std::max({10.0, maxX_, totalSteps_}));
    if (totalSteps_ <= 0) {
      settingRange_ = true;
      axisX_->applyNiceNumbers();
      settingRange_ = false;
    }
  }
  // One pixel column per point pair; before the chart is laid out, a typical width.
  const double plotWidth = chart()->plotArea().width();
  const int columns = plotWidth >= 16 ? static_cast<int>(plotWidth) : 800;
  const double x0 = axisX_->min(), x1 = axisX_->max();
  bool any = false;
  double minY = 0, maxY = 0;
  for (auto [series, data] : {std::pair{raw_, &rawData_}, std::pair{smooth_, &smoothData_},
                              std::pair{validation_, &validationData_}}) {
    DecimatedSeries::View view = data->visible(x0, x1, columns);
    series->replace(view.points);
    if (view.empty) continue;
    minY = any ? std::min(minY, view.minY) : view.minY;
    maxY = any ? std::max(maxY, view.maxY) : view.maxY;
    any = true;
  }
  if (!any) return;
  const double pad = std::max((maxY - minY) * 0.05, 1e-3);
  setAxisRange(axisY_, std::max(0.0, minY - pad), maxY + pad);
}

void LossChart::resetZoom() {
  zoomed_ = false;
  refresh();
}

void LossChart::mouseReleaseEvent(QMouseEvent* event) {
  // QChartView zooms out by half on a right click; the whole run is what a person wants back.
  if (event->button() == Qt::RightButton) {
    resetZoom();
    event->accept();
    return;
  }
  QChartView::mouseReleaseEvent(event);
}

void LossChart::resizeEvent(QResizeEvent* event) {
  QChartView::resizeEvent(event);
  scheduleRefresh();  // as many columns as the plot is wide
}

void LossChart::clear() {
  refreshTimer_.stop();
  rawData_.clear();
  smoothData_.clear();
  validationData_.clear();
  raw_->clear();
  smooth_->clear();
  validation_->clear();
  bestFiles_.clear();
  keptBest_.clear();
  lastValidation_.reset();
  earlyStop_.reset();
  showMarks();
  // Runs without validation_split show no validation entry in the legend.
  for (QLegendMarker* marker : chart()->legend()->markers(validation_)) marker->setVisible(false);
  smoothed_ = maxX_ = totalSteps_ = 0;
  zoomed_ = false;
  setAxisRange(axisX_, 0, 10);
  settingRange_ = true;
  axisX_->applyNiceNumbers();
  settingRange_ = false;
  setAxisRange(axisY_, 0, 1);
}

int LossChart::pointCount() const { return rawData_.size(); }

int LossChart::validationPointCount() const { return validationData_.size(); }

int LossChart::shownPointCount() const { return raw_->count(); }

}  // namespace sinter::gui

#include "loss_chart.h"

#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
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
  chart->addSeries(raw_);
  chart->addSeries(smooth_);
  chart->addSeries(validation_);
  axisX_ = new QValueAxis(chart);
  axisX_->setLabelFormat(QStringLiteral("%.0f"));
  axisY_ = new QValueAxis(chart);
  axisY_->setLabelFormat(QStringLiteral("%.3g"));
  chart->addAxis(axisX_, Qt::AlignBottom);
  chart->addAxis(axisY_, Qt::AlignLeft);
  for (QLineSeries* s : {raw_, smooth_, validation_}) {
    s->attachAxis(axisX_);
    s->attachAxis(axisY_);
  }
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setMinimumSize(320, 160);
  // Axes follow the data a few times a second rather than on every point.
  axisTimer_.setSingleShot(true);
  axisTimer_.setInterval(200);
  connect(&axisTimer_, &QTimer::timeout, this, &LossChart::updateAxes);
  clear();
}

void LossChart::addPoint(double step, double loss) {
  if (!std::isfinite(loss)) return;
  smoothed_ = raw_->count() == 0 ? loss : smoothing_ * smoothed_ + (1.0 - smoothing_) * loss;
  extendRange(step, loss);
  raw_->append(step, loss);
  smooth_->append(step, smoothed_);
}

void LossChart::addValidationPoint(double step, double loss) {
  if (!std::isfinite(loss)) return;
  extendRange(step, loss);
  validation_->append(step, loss);
  for (QLegendMarker* marker : chart()->legend()->markers(validation_)) marker->setVisible(true);
}

void LossChart::extendRange(double step, double loss) {
  if (empty_) minY_ = maxY_ = loss;
  minY_ = std::min(minY_, loss);
  maxY_ = std::max(maxY_, loss);
  maxX_ = std::max(maxX_, step);
  empty_ = false;
  if (!axisTimer_.isActive()) axisTimer_.start();
}

void LossChart::updateAxes() {
  axisX_->setRange(0, std::max({10.0, maxX_, totalSteps_}));
  if (totalSteps_ <= 0) axisX_->applyNiceNumbers();
  if (empty_) return;
  const double pad = std::max((maxY_ - minY_) * 0.05, 1e-3);
  axisY_->setRange(std::max(0.0, minY_ - pad), maxY_ + pad);
}

void LossChart::clear() {
  raw_->clear();
  smooth_->clear();
  validation_->clear();
  // Runs without validation_split show no validation entry in the legend.
  for (QLegendMarker* marker : chart()->legend()->markers(validation_)) marker->setVisible(false);
  empty_ = true;
  smoothed_ = minY_ = maxY_ = maxX_ = totalSteps_ = 0;
  axisX_->setRange(0, 10);
  axisX_->applyNiceNumbers();
  axisY_->setRange(0, 1);
}

int LossChart::pointCount() const { return raw_->count(); }

int LossChart::validationPointCount() const { return validation_->count(); }

}  // namespace sinter::gui

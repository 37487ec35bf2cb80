#include "checkpoint_grid_view.h"

#include <QHelpEvent>
#include <algorithm>
#include <QPainter>
#include <QToolTip>

namespace sinter::gui {

QString checkpointGridRowLabel(const CheckpointGridRow& row) {
  if (row.base) return CheckpointGridView::tr("Base model (step 0)");
  QString saved;
  if (row.step && row.epoch) saved = CheckpointGridView::tr("step %1, epoch %2").arg(*row.step).arg(*row.epoch);
  else if (row.step) saved = CheckpointGridView::tr("step %1").arg(*row.step);
  else if (row.epoch) saved = CheckpointGridView::tr("epoch %1").arg(*row.epoch);
  return saved.isEmpty() ? row.file : QStringLiteral("%1\n%2").arg(row.file, saved);
}

CheckpointGridView::CheckpointGridView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("checkpointGridView"));
  setMouseTracking(true);
}

void CheckpointGridView::setGrid(const CheckpointGridImage& grid) {
  grid_ = grid;
  rowLabels_.clear();
  columnLabels_.clear();
  for (const CheckpointGridRow& row : grid_.layout.rows) rowLabels_ << checkpointGridRowLabel(row);
  for (const CheckpointGridColumn& column : grid_.layout.columns) columnLabels_ << column.prompt;
  updateGeometry();
  resize(sizeHint());
  update();
}

void CheckpointGridView::clear() { setGrid({}); }

QSize CheckpointGridView::sizeHint() const {
  if (!hasGrid()) return {kRowHeaderWidth, kColumnHeaderHeight};
  return {kRowHeaderWidth + grid_.image.width(), kColumnHeaderHeight + grid_.image.height()};
}

QRect CheckpointGridView::cellRect(int row, int column) const {
  const CheckpointGridLayout& l = grid_.layout;
  return {kRowHeaderWidth + column * l.cellWidth, kColumnHeaderHeight + row * l.cellHeight, l.cellWidth, l.cellHeight};
}

void CheckpointGridView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().window());
  if (!hasGrid()) return;
  painter.drawImage(QPoint(kRowHeaderWidth, kColumnHeaderHeight), grid_.image);
  const CheckpointGridLayout& l = grid_.layout;
  painter.setPen(palette().color(QPalette::WindowText));
  const int margin = 4;
  for (int c = 0; c < columnLabels_.size(); ++c) {
    const QRect header(kRowHeaderWidth + c * l.cellWidth, 0, l.cellWidth, kColumnHeaderHeight);
    const QRect text = header.adjusted(margin, margin, -margin, -margin);
    // As much of the prompt as fits the header's lines, cut at its end.
    const QFontMetrics metrics(painter.font());
    const int lines = std::max(1, text.height() / metrics.lineSpacing());
    const auto fits = [&](const QString& s) {
      return metrics.boundingRect(text, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignBottom, s).height() <= lines * metrics.lineSpacing();
    };
    QString shown = columnLabels_[c];
    if (!fits(shown)) {  // the longest start of it that fits with an ellipsis (a bisection: prompts can be long)
      int low = 0, high = static_cast<int>(shown.size());
      while (low < high) {
        const int mid = (low + high + 1) / 2;
        if (fits(shown.left(mid) + QChar(0x2026))) low = mid;
        else high = mid - 1;
      }
      shown = shown.left(low) + QChar(0x2026);
    }
    painter.drawText(text, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignBottom, shown);
    painter.drawLine(header.topLeft(), header.bottomLeft());
  }
  for (int r = 0; r < rowLabels_.size(); ++r) {
    const QRect header(0, kColumnHeaderHeight + r * l.cellHeight, kRowHeaderWidth, l.cellHeight);
    painter.drawText(header.adjusted(margin, margin, -margin, -margin), Qt::TextWordWrap | Qt::AlignRight | Qt::AlignVCenter,
                     rowLabels_[r]);
    painter.drawLine(header.topLeft(), header.topRight());
  }
}

QString CheckpointGridView::rowToolTip(int row) const {
  const CheckpointGridRow& r = grid_.layout.rows.at(row);
  if (r.base) return tr("The base model, %1, without any saved file").arg(grid_.layout.model);
  return QStringLiteral("%1\n%2").arg(rowLabels_.at(row), r.path);
}

QString CheckpointGridView::columnToolTip(int column) const {
  const CheckpointGridColumn& c = grid_.layout.columns.at(column);
  QString tip = c.prompt;
  if (!c.negativePrompt.isEmpty()) tip += QStringLiteral("\n") + tr("Negative prompt: %1").arg(c.negativePrompt);
  tip += QStringLiteral("\n") + tr("Seed %1, %2x%3, %4 steps, CFG scale %5, %6")
                                    .arg(c.seed)
                                    .arg(c.width)
                                    .arg(c.height)
                                    .arg(c.steps)
                                    .arg(c.scale)
                                    .arg(c.sampler);
  return tip;
}

bool CheckpointGridView::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip || !hasGrid()) return QWidget::event(event);
  const QPoint p = static_cast<QHelpEvent*>(event)->pos();
  const CheckpointGridLayout& l = grid_.layout;
  const int column = p.x() >= kRowHeaderWidth ? (p.x() - kRowHeaderWidth) / l.cellWidth : -1;
  const int row = p.y() >= kColumnHeaderHeight ? (p.y() - kColumnHeaderHeight) / l.cellHeight : -1;
  QString tip;
  if (row >= 0 && row < l.rows.size() && column < 0) tip = rowToolTip(row);
  else if (column >= 0 && column < l.columns.size() && row < 0) tip = columnToolTip(column);
  else if (row >= 0 && row < l.rows.size() && column >= 0 && column < l.columns.size())
    tip = QStringLiteral("%1\n%2").arg(rowLabels_.at(row), columnLabels_.at(column));
  if (tip.isEmpty()) QToolTip::hideText();
  else QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(), tip, this);
  return true;
}

}  // namespace sinter::gui

#include "collapsible_section.h"

#include <QFrame>
#include <QToolButton>
#include <QVBoxLayout>

namespace sinter::gui {

CollapsibleSection::CollapsibleSection(const QString& title, bool expanded, QWidget* parent)
    : QWidget(parent) {
  header_ = new QToolButton(this);
  header_->setText(title);
  header_->setCheckable(true);
  header_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  header_->setAutoRaise(true);
  QFont bold = header_->font();
  bold.setBold(true);
  header_->setFont(bold);
  header_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);

  auto* line = new QFrame(this);
  line->setFrameShape(QFrame::HLine);
  line->setFrameShadow(QFrame::Sunken);

  content_ = new QWidget(this);
  contentLayout_ = new QVBoxLayout(content_);
  contentLayout_->setContentsMargins(16, 2, 2, 6);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(header_);
  layout->addWidget(line);
  layout->addWidget(content_);

  connect(header_, &QToolButton::toggled, this, [this](bool on) {
    header_->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    content_->setVisible(on);
    emit toggled(on);
  });
  header_->setChecked(expanded);
  header_->setArrowType(expanded ? Qt::DownArrow : Qt::RightArrow);
  content_->setVisible(expanded);
}

bool CollapsibleSection::isExpanded() const { return header_->isChecked(); }
void CollapsibleSection::setExpanded(bool expanded) { header_->setChecked(expanded); }
void CollapsibleSection::setTitle(const QString& title) { header_->setText(title); }

}  // namespace sinter::gui

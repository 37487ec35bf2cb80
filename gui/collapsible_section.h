#pragma once
// A titled section whose content folds away behind a header button (long forms stay readable).
#include <QWidget>

class QToolButton;
class QVBoxLayout;

namespace sinter::gui {

class CollapsibleSection : public QWidget {
  Q_OBJECT
 public:
  CollapsibleSection(const QString& title, bool expanded, QWidget* parent = nullptr);
  QVBoxLayout* contentLayout() const { return contentLayout_; }
  bool isExpanded() const;
  void setExpanded(bool expanded);
  void setTitle(const QString& title);

 signals:
  void toggled(bool expanded);

 private:
  QToolButton* header_;
  QWidget* content_;
  QVBoxLayout* contentLayout_;
};

}  // namespace sinter::gui

#pragma once
// Shows what a preset would change (option, current value, preset value) before it is applied.
#include <QDialog>
#include <vector>

#include "preset_changes.h"

class QTableWidget;

namespace sinter::gui {

class PresetDiffDialog : public QDialog {
  Q_OBJECT
 public:
  PresetDiffDialog(const QString& presetTitle, const std::vector<OptionChange>& changes, QWidget* parent = nullptr);
  QTableWidget* table() const { return table_; }

 private:
  QTableWidget* table_;
};

}  // namespace sinter::gui

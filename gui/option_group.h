#pragma once
// A titled box of option rows (label + editor) whose rows show only for the chosen model family.
#include <QGroupBox>
#include <optional>
#include <vector>

#include "core/option.h"

class QFormLayout;

namespace sinter::gui {

class OptionEditor;

class OptionGroup : public QGroupBox {
  Q_OBJECT
 public:
  explicit OptionGroup(const QString& title, QWidget* parent = nullptr);
  void addEditor(OptionEditor* editor);
  // A row that is not an option (a note under the field above it); always shown.
  void addNote(QWidget* note);
  const std::vector<OptionEditor*>& editors() const { return editors_; }
  bool isEmpty() const { return editors_.empty(); }
  // Shows the rows that apply to `family` (all when unknown); returns whether any row shows.
  bool applyFamily(std::optional<Family> family);

 private:
  QFormLayout* form_;
  std::vector<OptionEditor*> editors_;
};

}  // namespace sinter::gui

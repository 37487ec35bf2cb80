#include "option_group.h"

#include <QFormLayout>
#include <QLabel>

#include "option_editor.h"

namespace sinter::gui {

OptionGroup::OptionGroup(const QString& title, QWidget* parent) : QGroupBox(title, parent) {
  form_ = new QFormLayout(this);
  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form_->setRowWrapPolicy(QFormLayout::WrapLongRows);
  form_->setLabelAlignment(Qt::AlignLeft | Qt::AlignVCenter);
}

void OptionGroup::addEditor(OptionEditor* editor) {
  editor->setParent(this);
  QLabel* label = editor->label();
  label->setParent(this);
  form_->addRow(label, editor);
  editors_.push_back(editor);
}

void OptionGroup::addNote(QWidget* note) {
  note->setParent(this);
  form_->addRow(note);
}

bool OptionGroup::applyFamily(std::optional<Family> family) {
  bool any = false;
  for (OptionEditor* editor : editors_) {
    const bool show = !family || editor->spec().appliesToFamily(*family);
    form_->setRowVisible(editor, show);
    any = any || show;
  }
  setVisible(any);
  return any;
}

}  // namespace sinter::gui

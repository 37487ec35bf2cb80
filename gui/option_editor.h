#pragma once
// One option's input widget, built from its registry entry. Subclasses per option type live in
// option_editors.cpp; createOptionEditor() picks one. A std::monostate value means "unset".
#include <QString>
#include <QWidget>

#include "core/option.h"

class QLabel;

namespace sinter::gui {

class OptionEditor : public QWidget {
  Q_OBJECT
 public:
  OptionEditor(const OptionSpec& spec, QWidget* parent);
  const OptionSpec& spec() const { return spec_; }
  std::string key() const { return spec_.key; }

  virtual Value value() const = 0;
  // Shows `v` without emitting changed().
  virtual void setValue(const Value& v) = 0;

  // The translated label and tooltip from the registry.
  QString labelText() const;
  QString toolTipText() const;
  // A label widget for a form row (created once, carries the tooltip).
  QLabel* label();

  // Marks the field as offending (red frame, message in the tooltip); empty clears the mark.
  void setProblem(const QString& message);
  QString problem() const { return problem_; }
  // The registry's check of the current value (type, range, enum): "" when acceptable.
  QString checkCurrentValue() const;

 signals:
  void changed();

 protected:
  // Subclasses call this when the user edits (the form re-checks the value on changed()).
  void userEdited();
  // The widget that shows the problem frame.
  void setFrameTarget(QWidget* w) { frameTarget_ = w; }

 private:
  const OptionSpec& spec_;
  QLabel* label_ = nullptr;
  QWidget* frameTarget_ = nullptr;
  QString problem_;
};

OptionEditor* createOptionEditor(const OptionSpec& spec, QWidget* parent);

}  // namespace sinter::gui

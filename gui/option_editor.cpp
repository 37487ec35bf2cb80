#include "option_editor.h"

#include <QCoreApplication>
#include <QLabel>

#include "core/config.h"

namespace sinter::gui {

OptionEditor::OptionEditor(const OptionSpec& spec, QWidget* parent) : QWidget(parent), spec_(spec) {
  setToolTip(toolTipText());
}

QString OptionEditor::labelText() const {
  return QCoreApplication::translate("Option", spec_.label);
}

QString OptionEditor::toolTipText() const {
  // The sd-scripts key is shown too: users search for it in guides and old configs.
  return QStringLiteral("<p>%1</p><p><code>%2</code></p>")
      .arg(QCoreApplication::translate("Option", spec_.tooltip).toHtmlEscaped(),
           QString::fromUtf8(spec_.key));
}

QLabel* OptionEditor::label() {
  if (!label_) {
    label_ = new QLabel(QString(labelText()).replace(QLatin1Char('&'), QStringLiteral("&&")), parentWidget());
    label_->setToolTip(toolTipText());
    label_->setBuddy(this);
  }
  return label_;
}

void OptionEditor::setProblem(const QString& message) {
  problem_ = message;
  QWidget* target = frameTarget_ ? frameTarget_ : this;
  target->setStyleSheet(message.isEmpty() ? QString() : QStringLiteral("border: 2px solid #d03030;"));
  const QString tip = message.isEmpty()
                          ? toolTipText()
                          : toolTipText() + QStringLiteral("<p style='color:#d03030'>%1</p>")
                                                .arg(message.toHtmlEscaped());
  setToolTip(tip);
  target->setToolTip(tip);
  if (label_) label_->setToolTip(tip);
}

QString OptionEditor::checkCurrentValue() const {
  const Value v = value();
  if (isUnset(v)) return {};
  Value normalized;
  return QString::fromStdString(checkValue(spec_, v, normalized));
}

void OptionEditor::userEdited() { emit changed(); }

}  // namespace sinter::gui

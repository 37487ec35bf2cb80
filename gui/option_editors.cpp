// The editor for each option type: bool, int, float, string, enum, path and list.
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleValidator>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QProcess>
#include <QRegularExpressionValidator>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolButton>
#include <climits>

#include "option_editor.h"
#include "shell_quote.h"

namespace sinter::gui {

namespace {

QString toQ(const std::string& s) { return QString::fromStdString(s); }

QHBoxLayout* bareLayout(QWidget* w) {
  auto* layout = new QHBoxLayout(w);
  layout->setContentsMargins(0, 0, 0, 0);
  return layout;
}

// Options whose registry default is None can be left unset.
bool isNullable(const OptionSpec& spec) { return isUnset(spec.defaultValue); }

class BoolEditor : public OptionEditor {
 public:
  explicit BoolEditor(const OptionSpec& spec, QWidget* parent) : OptionEditor(spec, parent) {
    box_ = new QCheckBox(this);
    box_->setToolTip(toolTipText());
    bareLayout(this)->addWidget(box_);
    setFrameTarget(box_);
    connect(box_, &QCheckBox::toggled, this, [this] { userEdited(); });
  }
  Value value() const override { return box_->isChecked(); }
  void setValue(const Value& v) override {
    QSignalBlocker block(box_);
    box_->setChecked(asBool(v));
  }

 private:
  QCheckBox* box_;
};

// Integers: a spin box; an unset value is the special value just below the range.
class IntEditor : public OptionEditor {
 public:
  explicit IntEditor(const OptionSpec& spec, QWidget* parent) : OptionEditor(spec, parent) {
    spin_ = new QSpinBox(this);
    const long long lo = spec.minValue ? static_cast<long long>(*spec.minValue) : 0;
    const long long hi = spec.maxValue ? static_cast<long long>(*spec.maxValue) : INT_MAX;
    nullable_ = isNullable(spec);
    const int low = static_cast<int>(std::max<long long>(lo - (nullable_ ? 1 : 0), INT_MIN + 1LL));
    spin_->setRange(low, static_cast<int>(std::min<long long>(hi, INT_MAX)));
    if (nullable_)
      spin_->setSpecialValueText(OptionEditor::tr("Not set"));
    else if (spec.unset == UnsetRule::Zero && lo == 0)
      spin_->setSpecialValueText(OptionEditor::tr("Default"));
    spin_->setToolTip(toolTipText());
    spin_->setMinimumWidth(120);
    bareLayout(this)->addWidget(spin_);
    layout()->addItem(new QSpacerItem(0, 0, QSizePolicy::Expanding));
    setFrameTarget(spin_);
    connect(spin_, qOverload<int>(&QSpinBox::valueChanged), this, [this] { userEdited(); });
  }
  Value value() const override {
    if (nullable_ && spin_->value() == spin_->minimum()) return std::monostate{};
    return static_cast<long long>(spin_->value());
  }
  void setValue(const Value& v) override {
    QSignalBlocker block(spin_);
    spin_->setValue(isUnset(v) && nullable_ ? spin_->minimum() : static_cast<int>(asInt(v)));
  }

 private:
  QSpinBox* spin_;
  bool nullable_ = false;
};

// Integers wider than a spin box holds (seeds up to 2^32-1, step counts): digits in a line edit;
// empty means unset (or the default).
class WideIntEditor : public OptionEditor {
 public:
  explicit WideIntEditor(const OptionSpec& spec, QWidget* parent) : OptionEditor(spec, parent) {
    edit_ = new QLineEdit(this);
    edit_->setValidator(new QRegularExpressionValidator(QRegularExpression(QStringLiteral("-?[0-9]{0,19}")), edit_));
    edit_->setPlaceholderText(isNullable(spec) ? OptionEditor::tr("Not set") : OptionEditor::tr("Default"));
    edit_->setToolTip(toolTipText());
    edit_->setMaximumWidth(200);
    bareLayout(this)->addWidget(edit_);
    layout()->addItem(new QSpacerItem(0, 0, QSizePolicy::Expanding));
    setFrameTarget(edit_);
    connect(edit_, &QLineEdit::textEdited, this, [this] { userEdited(); });
  }
  Value value() const override {
    bool ok = false;
    const long long v = edit_->text().trimmed().toLongLong(&ok);
    if (!ok) return std::monostate{};
    return v;
  }
  void setValue(const Value& v) override {
    QSignalBlocker block(edit_);
    edit_->setText(isUnset(v) ? QString() : QString::number(asInt(v)));
  }

 private:
  QLineEdit* edit_;
};

// Floats: free text (learning rates read best as 1e-4), checked by the registry as the user
// types. An integer written without '.' stays an integer (lr_warmup_steps = 100 is a step count).
class FloatEditor : public OptionEditor {
 public:
  explicit FloatEditor(const OptionSpec& spec, QWidget* parent) : OptionEditor(spec, parent) {
    edit_ = new QLineEdit(this);
    auto* validator = new QDoubleValidator(edit_);
    validator->setLocale(QLocale::c());
    validator->setNotation(QDoubleValidator::ScientificNotation);
    edit_->setValidator(validator);
    edit_->setPlaceholderText(isNullable(spec) ? OptionEditor::tr("Not set") : OptionEditor::tr("Default"));
    edit_->setToolTip(toolTipText());
    edit_->setMaximumWidth(200);
    bareLayout(this)->addWidget(edit_);
    layout()->addItem(new QSpacerItem(0, 0, QSizePolicy::Expanding));
    setFrameTarget(edit_);
    connect(edit_, &QLineEdit::textEdited, this, [this] { userEdited(); });
  }
  Value value() const override {
    const QString text = edit_->text().trimmed();
    if (text.isEmpty()) return std::monostate{};
    bool ok = false;
    if (!text.contains(QLatin1Char('.')) && !text.contains(QLatin1Char('e'), Qt::CaseInsensitive)) {
      const long long asInteger = text.toLongLong(&ok);
      if (ok) return asInteger;
    }
    const double d = QLocale::c().toDouble(text, &ok);
    if (!ok) return text.toStdString();  // the registry check reports it
    return d;
  }
  void setValue(const Value& v) override {
    QSignalBlocker block(edit_);
    if (isUnset(v))
      edit_->clear();
    else if (std::holds_alternative<long long>(v))
      edit_->setText(QString::number(std::get<long long>(v)));
    else
      edit_->setText(toQ(formatDouble(asDouble(v))));
  }

 private:
  QLineEdit* edit_;
};

// Enums: the registry's choices (sd-scripts spellings); a leading empty item when None is allowed.
class EnumEditor : public OptionEditor {
 public:
  explicit EnumEditor(const OptionSpec& spec, QWidget* parent) : OptionEditor(spec, parent) {
    combo_ = new QComboBox(this);
    if (isNullable(spec)) combo_->addItem(OptionEditor::tr("Not set"), QString());
    for (const std::string& c : spec.choices) combo_->addItem(toQ(c), toQ(c));
    combo_->setToolTip(toolTipText());
    combo_->setMinimumWidth(160);
    bareLayout(this)->addWidget(combo_);
    layout()->addItem(new QSpacerItem(0, 0, QSizePolicy::Expanding));
    setFrameTarget(combo_);
    connect(combo_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { userEdited(); });
  }
  Value value() const override {
    const QString data = combo_->currentData().toString();
    if (data.isEmpty()) return std::monostate{};
    if (spec().type == OptionType::Int) return data.toLongLong();
    return data.toStdString();
  }
  void setValue(const Value& v) override {
    QSignalBlocker block(combo_);
    const int index = isUnset(v) ? combo_->findData(QString()) : combo_->findData(toQ(asString(v)));
    combo_->setCurrentIndex(std::max(index, 0));
  }

 private:
  QComboBox* combo_;
};

// Strings: a line edit, or an editable list when the registry suggests common values.
class StringEditor : public OptionEditor {
 public:
  explicit StringEditor(const OptionSpec& spec, QWidget* parent) : OptionEditor(spec, parent) {
    if (!spec.suggestions.empty()) {
      auto* combo = new QComboBox(this);
      combo->setEditable(true);
      for (const std::string& s : spec.suggestions) combo->addItem(toQ(s));
      combo->setCurrentIndex(-1);
      edit_ = combo->lineEdit();
      bareLayout(this)->addWidget(combo);
      setFrameTarget(combo);
      connect(combo, &QComboBox::currentTextChanged, this, [this] { userEdited(); });
    } else {
      edit_ = new QLineEdit(this);
      bareLayout(this)->addWidget(edit_);
      setFrameTarget(edit_);
      connect(edit_, &QLineEdit::textEdited, this, [this] { userEdited(); });
    }
    if (spec.secret) {
      edit_->setEchoMode(QLineEdit::PasswordEchoOnEdit);
      edit_->setPlaceholderText(OptionEditor::tr("Kept for this session only; never saved to a file"));
    }
    edit_->setToolTip(toolTipText());
  }
  Value value() const override {
    const QString text = edit_->text();
    if (text.isEmpty()) return std::monostate{};
    return text.toStdString();
  }
  void setValue(const Value& v) override {
    QSignalBlocker block(edit_);
    QSignalBlocker blockParent(edit_->parentWidget());
    edit_->setText(isUnset(v) ? QString() : toQ(asString(v)));
  }

 private:
  QLineEdit* edit_;
};

// Paths: a line edit and a browse button that asks for a file or a folder.
class PathEditor : public OptionEditor {
 public:
  explicit PathEditor(const OptionSpec& spec, QWidget* parent) : OptionEditor(spec, parent) {
    edit_ = new QLineEdit(this);
    edit_->setToolTip(toolTipText());
    // What the runner uses when the path is left empty, where that is something ("bundled").
    if (spec.unsetMeaning) edit_->setPlaceholderText(QCoreApplication::translate("Option", spec.unsetMeaning));
    auto* browseButton = new QToolButton(this);
    browseButton->setText(QStringLiteral("…"));
    browseButton->setToolTip(spec.pathKind == PathKind::Directory ? OptionEditor::tr("Choose a folder")
                                                            : OptionEditor::tr("Choose a file"));
    auto* layout = bareLayout(this);
    layout->addWidget(edit_, 1);
    layout->addWidget(browseButton);
    setFrameTarget(edit_);
    connect(edit_, &QLineEdit::editingFinished, this, [this] {
      if (edit_->isModified()) {
        edit_->setModified(false);
        userEdited();
      }
    });
    connect(browseButton, &QToolButton::clicked, this, [this] { browse(); });
  }
  Value value() const override {
    const QString text = edit_->text().trimmed();
    if (text.isEmpty()) return std::monostate{};
    return text.toStdString();
  }
  void setValue(const Value& v) override {
    QSignalBlocker block(edit_);
    edit_->setText(isUnset(v) ? QString() : toQ(asString(v)));
    edit_->setModified(false);
  }

 private:
  void browse() {
    const QString start = edit_->text();
    const QString chosen =
        spec().pathKind == PathKind::Directory
            ? QFileDialog::getExistingDirectory(this, labelText(), start)
            : QFileDialog::getOpenFileName(this, labelText(), start);
    if (chosen.isEmpty()) return;
    edit_->setText(chosen);
    userEdited();
  }
  QLineEdit* edit_;
};

// Lists: one line, items separated by spaces; quote an item that holds spaces.
class ListEditor : public OptionEditor {
 public:
  explicit ListEditor(const OptionSpec& spec, QWidget* parent) : OptionEditor(spec, parent) {
    edit_ = new QLineEdit(this);
    edit_->setPlaceholderText(OptionEditor::tr("Items separated by spaces; quote items that contain spaces"));
    edit_->setToolTip(toolTipText());
    bareLayout(this)->addWidget(edit_);
    setFrameTarget(edit_);
    connect(edit_, &QLineEdit::textEdited, this, [this] { userEdited(); });
  }
  Value value() const override {
    const QStringList items = QProcess::splitCommand(edit_->text());
    if (items.isEmpty()) return std::monostate{};
    StringList list;
    for (const QString& item : items) list.push_back(item.toStdString());
    return list;
  }
  void setValue(const Value& v) override {
    QSignalBlocker block(edit_);
    QStringList items;
    if (!isUnset(v))
      for (const std::string& item : asList(v)) items << toQ(item);
    edit_->setText(joinQuoted(items));
  }

 private:
  QLineEdit* edit_;
};

}  // namespace

OptionEditor* createOptionEditor(const OptionSpec& spec, QWidget* parent) {
  switch (spec.type) {
    case OptionType::Bool: return new BoolEditor(spec, parent);
    case OptionType::Int:
      if (!spec.choices.empty()) return new EnumEditor(spec, parent);
      if (spec.maxValue && *spec.maxValue > INT_MAX) return new WideIntEditor(spec, parent);
      return new IntEditor(spec, parent);
    case OptionType::Float: return new FloatEditor(spec, parent);
    case OptionType::Enum: return new EnumEditor(spec, parent);
    case OptionType::Path: return new PathEditor(spec, parent);
    case OptionType::List: return new ListEditor(spec, parent);
    case OptionType::String: break;
  }
  return new StringEditor(spec, parent);
}

}  // namespace sinter::gui

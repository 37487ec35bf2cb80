#include "compile_settings_panel.h"

#include <QLabel>
#include <QVBoxLayout>

#include "compile_info_text.h"
#include "core/registry.h"
#include "option_editor.h"
#include "option_group.h"

namespace sinter::gui {

namespace {
// The switch is the option named like the section; the options that depend on it share its
// prefix (compile_backend, compile_mode, ...). TF32 and cuDNN benchmark work without compile.
const std::string kSwitchKey = "compile";
bool dependsOnSwitch(const std::string& key) { return key.rfind(kSwitchKey + "_", 0) == 0; }
}  // namespace

CompileSettingsPanel::CompileSettingsPanel(Tab tab, QWidget* parent)
    : CollapsibleSection(tr("Torch Compile Settings"), true, parent) {
  group_ = new OptionGroup(QString(), this);
  group_->setFlat(true);
  for (const OptionSpec& spec : optionRegistry()) {
    if (spec.section != Section::Compile || !spec.appliesToTab(tab)) continue;
    OptionEditor* editor = createOptionEditor(spec, group_);
    group_->addEditor(editor);
    if (spec.key == kSwitchKey) compileSwitch_ = editor;
  }
  info_ = new QLabel(this);
  info_->setWordWrap(true);
  info_->setTextFormat(Qt::RichText);
  info_->setObjectName(QStringLiteral("compileInfo"));
  info_->setFrameShape(QFrame::StyledPanel);
  info_->setMargin(6);
  contentLayout()->addWidget(group_);
  contentLayout()->addWidget(info_);
}

const std::vector<OptionEditor*>& CompileSettingsPanel::editors() const { return group_->editors(); }

bool CompileSettingsPanel::appliesTo(std::optional<Family> family) {
  return family && (*family == Family::SDXL || *family == Family::FLUX);
}

void CompileSettingsPanel::applyFamily(std::optional<Family> family) {
  setVisible(appliesTo(family));
}

void CompileSettingsPanel::refresh(const Config& formConfig) {
  const bool on = compileSwitch_ && asBool(compileSwitch_->value());
  for (OptionEditor* editor : group_->editors())
    if (editor != compileSwitch_ && dependsOnSwitch(editor->key())) {
      editor->setEnabled(on);
      editor->label()->setEnabled(on);
    }
  info_->setText(describeCompileSettings(formConfig).html());
}

QString CompileSettingsPanel::infoHtml() const { return info_->text(); }

}  // namespace sinter::gui

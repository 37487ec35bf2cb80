#include "compile_settings_panel.h"

#include <QLabel>
#include <QVBoxLayout>

#include "compile_info_text.h"
#include "runner_compile_plan.h"
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
    : CollapsibleSection(tr("Torch Compile Settings"), true, parent), tab_(tab), plan_(new RunnerCompilePlan(this)) {
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
  runnerPlan_ = new QLabel(this);
  runnerPlan_->setWordWrap(true);
  runnerPlan_->setTextFormat(Qt::RichText);
  runnerPlan_->setObjectName(QStringLiteral("runnerCompilePlan"));
  runnerPlan_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  runnerPlan_->setFrameShape(QFrame::StyledPanel);
  runnerPlan_->setMargin(6);
  runnerPlan_->setText(tr("The runner's plan for this config appears here."));
  connect(plan_, &RunnerCompilePlan::planReady, this, &CompileSettingsPanel::showRunnerPlan);
  contentLayout()->addWidget(group_);
  contentLayout()->addWidget(runnerPlan_);
  contentLayout()->addWidget(info_);
}

const std::vector<OptionEditor*>& CompileSettingsPanel::editors() const { return group_->editors(); }

bool CompileSettingsPanel::appliesTo(std::optional<Family> family) {
  // The families the registry gives the compile options (the mission keeps the panel to SDXL and FLUX).
  return family && findOption("compile")->appliesToFamily(*family);
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
  config_ = formConfig;
  if (isVisible()) plan_->request(formConfig, tab_);
}

void CompileSettingsPanel::showEvent(QShowEvent* event) {
  CollapsibleSection::showEvent(event);
  if (config_) plan_->request(*config_, tab_);
}

void CompileSettingsPanel::showRunnerPlan(const QString& text, bool ok) {
  runnerPlanText_ = text;
  const QString heading = ok ? tr("The runner's plan for this config on this machine (sinter-runner --compile_plan):")
                             : tr("The runner refuses these settings:");
  runnerPlan_->setText(QStringLiteral("<p><b>%1</b></p><pre style='white-space:pre-wrap'>%2</pre>")
                           .arg(heading.toHtmlEscaped(), text.toHtmlEscaped()));
}

QString CompileSettingsPanel::infoHtml() const { return info_->text(); }

QString CompileSettingsPanel::runnerPlanText() const { return runnerPlanText_; }

}  // namespace sinter::gui

#pragma once
// Advanced > Torch Compile Settings: the compile section's options (from the registry), enabled
// only while compile is on, shown only for SDXL and FLUX, with the runner's own plan for the form's
// config (asked while the panel is on screen) and the form's notes on settings that cannot apply.
#include <optional>
#include <vector>

#include "collapsible_section.h"
#include "core/config.h"

class QLabel;

namespace sinter::gui {

class OptionEditor;
class OptionGroup;
class RunnerCompilePlan;

class CompileSettingsPanel : public CollapsibleSection {
  Q_OBJECT
 public:
  CompileSettingsPanel(Tab tab, QWidget* parent = nullptr);
  const std::vector<OptionEditor*>& editors() const;
  // Visible exactly for the families the compile options apply to (SDXL and FLUX).
  static bool appliesTo(std::optional<Family> family);
  void applyFamily(std::optional<Family> family);
  // Follows the compile switch and refreshes the notes for the whole form's values; asks the
  // runner for its plan while the panel is visible.
  void refresh(const Config& formConfig);
  QString infoHtml() const;
  QString runnerPlanText() const;  // the runner's last answer, as shown

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void showRunnerPlan(const QString& text, bool ok);

  Tab tab_;
  std::optional<Config> config_;
  RunnerCompilePlan* plan_;
  QLabel* runnerPlan_;
  QString runnerPlanText_;
  OptionEditor* compileSwitch_ = nullptr;
  OptionGroup* group_;
  QLabel* info_;
};

}  // namespace sinter::gui

#pragma once
// Advanced > Torch Compile Settings: the compile section's options (from the registry), enabled
// only while compile is on, shown only for SDXL and FLUX, with an explanation of their effect.
#include <optional>
#include <vector>

#include "collapsible_section.h"
#include "core/config.h"

class QLabel;

namespace sinter::gui {

class OptionEditor;
class OptionGroup;

class CompileSettingsPanel : public CollapsibleSection {
  Q_OBJECT
 public:
  CompileSettingsPanel(Tab tab, QWidget* parent = nullptr);
  const std::vector<OptionEditor*>& editors() const;
  // Visible exactly for the families the compile options apply to (SDXL and FLUX).
  static bool appliesTo(std::optional<Family> family);
  void applyFamily(std::optional<Family> family);
  // Follows the compile switch and refreshes the explanation for the whole form's values.
  void refresh(const Config& formConfig);
  QString infoHtml() const;

 private:
  OptionEditor* compileSwitch_ = nullptr;
  OptionGroup* group_;
  QLabel* info_;
};

}  // namespace sinter::gui

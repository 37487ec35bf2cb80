#pragma once
// A tab's option form, built from the registry: Source model, Folders, Parameters (Basic, the
// family-specific SDXL and FLUX groups, Advanced with Torch Compile Settings) and Samples.
// It turns widgets into a Config and back, and shows only what applies to the model family.
#include <QWidget>
#include <map>
#include <optional>
#include <vector>

#include "core/config.h"
#include "core/diagnostics.h"

class QLabel;

namespace sinter::gui {

class CompileSettingsPanel;
class OptionEditor;
class OptionGroup;
class CollapsibleSection;

class OptionForm : public QWidget {
  Q_OBJECT
 public:
  explicit OptionForm(Tab tab, QWidget* parent = nullptr);
  Tab tab() const { return tab_; }

  // The form's values: every edited option (values equal to the default are left implicit) on top
  // of the options that have no widget here, with training_type set to this tab.
  Config config() const;
  // Shows every option's effective value from `config`.
  void setConfig(const Config& config);

  // The family chosen in model_family, else the one detected from the checkpoint.
  std::optional<Family> effectiveFamily() const;
  std::optional<Family> detectedFamily() const { return detected_; }

  OptionEditor* editor(const std::string& key) const;
  const std::map<std::string, OptionEditor*>& editors() const { return editors_; }
  CompileSettingsPanel* compilePanel() const { return compilePanel_; }
  CollapsibleSection* advancedSection() const { return advanced_; }

  // Marks the fields named by `diags` (and clears the others); returns how many were marked.
  int markProblems(const std::vector<Diagnostic>& diags);
  // The registry's per-field checks of what is typed now (range, type, enum).
  std::vector<Diagnostic> fieldProblems() const;

 signals:
  void changed();
  void familyChanged();

 private:
  void build();
  OptionGroup* addGroup(QWidget* parent, QLayout* layout, const QString& title);
  void addEditor(OptionGroup* group, const OptionSpec& spec);
  void onEdited(OptionEditor* editor);
  void detectFamily();
  void refreshFamily();

  Tab tab_;
  Config base_;  // options without a widget keep their loaded values here
  std::map<std::string, OptionEditor*> editors_;
  std::vector<OptionGroup*> groups_;
  std::vector<std::pair<OptionGroup*, Family>> familyGroups_;
  CompileSettingsPanel* compilePanel_ = nullptr;
  CollapsibleSection* advanced_ = nullptr;
  QLabel* detectedLabel_ = nullptr;
  std::optional<Family> detected_;
  std::optional<Family> shownFamily_;
  bool familyShown_ = false;
};

QString sectionTitle(Section section);
// The section's title on `tab` (textual inversion's Network section is its Embedding).
QString sectionTitle(Section section, Tab tab);
QString familyDisplayName(Family family);

}  // namespace sinter::gui

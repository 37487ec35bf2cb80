#include "option_form.h"

#include <algorithm>

#include <QComboBox>
#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "collapsible_section.h"
#include "compile_settings_panel.h"
#include "core/family_table.h"
#include "core/model_family_detect.h"
#include "core/registry.h"
#include "option_editor.h"
#include "option_group.h"

namespace sinter::gui {

namespace {
// Sinter's own structural keys: the tab sets training_type; model_family drives visibility and
// detection reads the checkpoint named by the model path.
const char* const kTrainingTypeKey = "training_type";
const char* const kFamilyKey = "model_family";
const char* const kCheckpointKey = "pretrained_model_name_or_path";

bool onlyFor(const OptionSpec& spec, Family f) { return spec.families == static_cast<std::uint8_t>(f); }
bool isFolder(const OptionSpec& spec) { return spec.type == OptionType::Path && spec.pathKind == PathKind::Directory; }

// The model family list offers only the families the tab trains (textual inversion: SD 1.x/2.x
// and SDXL, as sd-scripts' scripts).
void offerTrainedFamilies(OptionEditor* familyEditor, Tab tab) {
  auto* combo = familyEditor->findChild<QComboBox*>();
  if (!combo) return;
  for (int i = combo->count() - 1; i >= 0; --i)
    if (const auto family = familyFromString(combo->itemData(i).toString().toStdString()); family && !tabTrainsFamily(tab, *family))
      combo->removeItem(i);
}
}  // namespace

QString sectionTitle(Section section, Tab tab) {
  // Textual inversion's "network" is the embedding: its token, initial word and vectors.
  if (section == Section::Network && tab == Tab::TextualInversion) return OptionForm::tr("Embedding");
  return sectionTitle(section);
}

QString sectionTitle(Section section) {
  switch (section) {
    case Section::Model: return OptionForm::tr("Source model");
    case Section::Dataset: return OptionForm::tr("Dataset");
    case Section::Training: return OptionForm::tr("Training");
    case Section::Network: return OptionForm::tr("Network");
    case Section::Optimizer: return OptionForm::tr("Optimizer");
    case Section::Compile: return OptionForm::tr("Torch Compile Settings");
    case Section::Saving: return OptionForm::tr("Saving");
    case Section::Sample: return OptionForm::tr("Samples");
    case Section::Logging: return OptionForm::tr("Logging");
  }
  return {};
}

QString familyDisplayName(Family family) { return QString::fromLatin1(familyRow(family).label); }

OptionForm::OptionForm(Tab tab, QWidget* parent) : QWidget(parent), tab_(tab) {
  build();
  setConfig(Config());
}

OptionGroup* OptionForm::addGroup(QWidget* parent, QLayout* layout, const QString& title) {
  auto* group = new OptionGroup(title, parent);
  layout->addWidget(group);
  groups_.push_back(group);
  return group;
}

void OptionForm::addEditor(OptionGroup* group, const OptionSpec& spec) {
  OptionEditor* editor = createOptionEditor(spec, group);
  group->addEditor(editor);
  editors_[spec.key] = editor;
  connect(editor, &OptionEditor::changed, this, [this, editor] { onEdited(editor); });
}

void OptionForm::build() {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  const auto& registry = optionRegistry();
  const auto applies = [this](const OptionSpec& s) {
    return s.appliesToTab(tab_) && std::string(s.key) != kTrainingTypeKey;
  };
  const auto familySpecific = [](const OptionSpec& s) {
    for (Family family : allFamilies())
      if (onlyFor(s, family)) return true;
    return false;
  };

  // Source model: the model section's everyday fields (folders go to Folders).
  OptionGroup* source = addGroup(this, layout, sectionTitle(Section::Model));
  for (const OptionSpec& s : registry)
    if (applies(s) && s.section == Section::Model && !s.advanced && !isFolder(s)) {
      addEditor(source, s);
      if (std::string(s.key) == kFamilyKey) {
        offerTrainedFamilies(editors_[s.key], tab_);
        detectedLabel_ = new QLabel(source);
        detectedLabel_->setObjectName(QStringLiteral("detectedFamily"));
        detectedLabel_->setWordWrap(true);
        source->addNote(detectedLabel_);
      }
    }

  OptionGroup* folders = addGroup(this, layout, tr("Folders"));
  for (const OptionSpec& s : registry)
    if (applies(s) && !s.advanced && isFolder(s) && s.section != Section::Compile) addEditor(folders, s);

  auto* parameters = new CollapsibleSection(tr("Parameters"), true, this);
  layout->addWidget(parameters);

  // Basic: the everyday options of each section, two columns of groups.
  auto* basic = new CollapsibleSection(tr("Basic"), true, parameters);
  parameters->contentLayout()->addWidget(basic);
  auto* basicGrid = new QWidget(basic);
  auto* grid = new QGridLayout(basicGrid);
  grid->setContentsMargins(0, 0, 0, 0);
  basic->contentLayout()->addWidget(basicGrid);
  int placed = 0;
  const Section basicSections[] = {Section::Dataset, Section::Training, Section::Network,
                                   Section::Optimizer, Section::Saving, Section::Logging};
  for (Section section : basicSections) {
    auto* group = new OptionGroup(sectionTitle(section, tab_), basicGrid);
    for (const OptionSpec& s : registry)
      if (applies(s) && s.section == section && !s.advanced && !isFolder(s) && !familySpecific(s))
        addEditor(group, s);
    if (group->isEmpty()) {
      delete group;
      continue;
    }
    groups_.push_back(group);
    grid->addWidget(group, placed / 2, placed % 2, Qt::AlignTop);
    ++placed;
  }
  grid->setColumnStretch(0, 1);
  grid->setColumnStretch(1, 1);

  // Family-specific groups: options that exist for one family only.
  for (Family family : allFamilies()) {
    const auto own = [&](const OptionSpec& s) {
      return applies(s) && onlyFor(s, family) && s.section != Section::Model && s.section != Section::Sample &&
             s.section != Section::Compile && !isFolder(s);
    };
    if (std::none_of(registry.begin(), registry.end(), own)) continue;  // a family with no options of its own
    OptionGroup* group = addGroup(parameters, parameters->contentLayout(), familyDisplayName(family));
    familyGroups_.emplace_back(group, family);
    for (const OptionSpec& s : registry)
      if (own(s)) addEditor(group, s);
  }

  // Advanced: the rest, by section, and the compile panel.
  advanced_ = new CollapsibleSection(tr("Advanced"), false, parameters);
  parameters->contentLayout()->addWidget(advanced_);
  for (Section section : allSections()) {
    if (section == Section::Compile || section == Section::Sample) continue;
    auto* group = new OptionGroup(sectionTitle(section, tab_), advanced_);
    for (const OptionSpec& s : registry)
      if (applies(s) && s.section == section && s.advanced && !familySpecific(s)) addEditor(group, s);
    if (group->isEmpty()) {
      delete group;
      continue;
    }
    groups_.push_back(group);
    advanced_->contentLayout()->addWidget(group);
  }
  compilePanel_ = new CompileSettingsPanel(tab_, advanced_);
  advanced_->contentLayout()->addWidget(compilePanel_);
  for (OptionEditor* editor : compilePanel_->editors()) {
    editors_[editor->key()] = editor;
    connect(editor, &OptionEditor::changed, this, [this, editor] { onEdited(editor); });
  }

  OptionGroup* samples = addGroup(this, layout, sectionTitle(Section::Sample));
  for (const OptionSpec& s : registry)
    if (applies(s) && s.section == Section::Sample) addEditor(samples, s);
  layout->addStretch(1);
}

Config OptionForm::config() const {
  Config c = base_;
  c.set(kTrainingTypeKey, std::string(toString(tab_)));
  for (const auto& [key, editor] : editors_) {
    const Value v = editor->value();
    if (isUnset(v)) {
      c.erase(key);
      continue;
    }
    Value stored;
    if (!checkValue(editor->spec(), v, stored).empty()) continue;  // marked on the field
    if (stored == editor->spec().defaultValue)
      c.erase(key);
    else
      c.set(key, stored);
  }
  return c;
}

void OptionForm::setConfig(const Config& config) {
  base_ = config;
  for (const auto& [key, editor] : editors_) {
    editor->setValue(config.get(key));
    editor->setProblem(QString());
  }
  detectFamily();
  refreshFamily();
  compilePanel_->refresh(this->config());
}

std::optional<Family> OptionForm::effectiveFamily() const {
  if (OptionEditor* familyEditor = editor(kFamilyKey))
    if (auto chosen = familyFromString(asString(familyEditor->value()))) return chosen;
  return detected_;
}

OptionEditor* OptionForm::editor(const std::string& key) const {
  auto it = editors_.find(key);
  return it == editors_.end() ? nullptr : it->second;
}

void OptionForm::onEdited(OptionEditor* editor) {
  editor->setProblem(editor->checkCurrentValue());
  if (editor->key() == kCheckpointKey) detectFamily();
  if (editor->key() == kCheckpointKey || editor->key() == kFamilyKey) refreshFamily();
  compilePanel_->refresh(config());
  emit changed();
}

void OptionForm::detectFamily() {
  detected_.reset();
  QString note;
  OptionEditor* checkpoint = editor(kCheckpointKey);
  const QString path = checkpoint ? QString::fromStdString(asString(checkpoint->value())) : QString();
  if (!path.isEmpty() && QFileInfo(path).isFile()) {
    try {
      detected_ = detectModelFamily(path.toStdString());
      note = detected_ ? tr("Detected from the checkpoint: %1").arg(familyDisplayName(*detected_))
                       : tr("The checkpoint's tensor names match no known model family.");
      if (detected_ && !tabTrainsFamily(tab_, *detected_))
        note = tr("Detected from the checkpoint: %1, which this tab does not train (textual inversion: SD 1.x, SD 2.x and SDXL).")
                   .arg(familyDisplayName(*detected_));
    } catch (const std::exception& e) {
      note = tr("Could not read the checkpoint: %1").arg(QString::fromUtf8(e.what()));
    }
  } else if (!path.isEmpty() && path.endsWith(QStringLiteral(".safetensors"))) {
    note = tr("The checkpoint file does not exist yet.");
  }
  if (detectedLabel_) {
    detectedLabel_->setText(note);
    detectedLabel_->setVisible(!note.isEmpty());
  }
}

void OptionForm::refreshFamily() {
  const std::optional<Family> family = effectiveFamily();
  if (familyShown_ && family == shownFamily_) return;
  familyShown_ = true;
  shownFamily_ = family;
  for (OptionGroup* group : groups_) group->applyFamily(family);
  // The family-specific groups show only once the family is known to be theirs.
  for (auto [group, groupFamily] : familyGroups_)
    group->setVisible(!group->isEmpty() && family == groupFamily);
  compilePanel_->applyFamily(family);
  emit familyChanged();
}

int OptionForm::markProblems(const std::vector<Diagnostic>& diags) {
  std::map<std::string, QStringList> messages;
  for (const Diagnostic& d : diags)
    if (editors_.count(d.key)) messages[d.key] << QString::fromStdString(d.message);
  for (const auto& [key, editor] : editors_) {
    auto it = messages.find(key);
    editor->setProblem(it == messages.end() ? QString() : it->second.join(QLatin1Char('\n')));
    if (it != messages.end() && advanced_->isAncestorOf(editor)) advanced_->setExpanded(true);
  }
  return static_cast<int>(messages.size());
}

std::vector<Diagnostic> OptionForm::fieldProblems() const {
  std::vector<Diagnostic> out;
  for (const auto& [key, editor] : editors_) {
    const QString problem = editor->checkCurrentValue();
    if (problem.isEmpty()) continue;
    Diagnostic d;
    d.key = key;
    d.message = problem.toStdString();
    out.push_back(d);
  }
  return out;
}

}  // namespace sinter::gui

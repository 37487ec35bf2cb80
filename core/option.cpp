#include "core/option.h"

namespace sinter {

bool OptionSpec::isUnsetValue(const Value& v) const {
  if (isUnset(v)) return true;
  if (auto s = std::get_if<std::string>(&v)) {
    if (s->empty()) return true;
    if (unset == UnsetRule::Auto && *s == "auto") return true;
  }
  if (auto l = std::get_if<StringList>(&v)) return l->empty();
  if (unset == UnsetRule::Zero) {
    if (auto i = std::get_if<long long>(&v)) return *i == 0;
    if (auto d = std::get_if<double>(&v)) return *d == 0.0;
  }
  return false;
}

const char* toString(OptionType t) {
  switch (t) {
    case OptionType::Bool: return "bool";
    case OptionType::Int: return "int";
    case OptionType::Float: return "float";
    case OptionType::String: return "string";
    case OptionType::Enum: return "enum";
    case OptionType::Path: return "path";
    case OptionType::List: return "list";
  }
  return "?";
}

const char* toString(Section s) {
  switch (s) {
    case Section::Model: return "model";
    case Section::Dataset: return "dataset";
    case Section::Training: return "training";
    case Section::Network: return "network";
    case Section::Optimizer: return "optimizer";
    case Section::Compile: return "compile";
    case Section::Saving: return "saving";
    case Section::Sample: return "sample";
    case Section::Logging: return "logging";
  }
  return "?";
}

const char* toString(Tab t) {
  switch (t) {
    case Tab::LoRA: return "lora";
    case Tab::DreamBooth: return "dreambooth";
    case Tab::FineTune: return "finetune";
    case Tab::TextualInversion: return "textual_inversion";
  }
  return "?";
}

const char* toString(Family f) {
  switch (f) {
    case Family::SDXL: return "sdxl";
    case Family::FLUX: return "flux";
    case Family::SD15: return "sd15";
    case Family::SD2: return "sd2";
    case Family::SD3: return "sd3";
  }
  return "?";
}

std::optional<Tab> tabFromString(const std::string& s) {
  for (Tab t : allTrainingTypes())
    if (s == toString(t)) return t;
  return std::nullopt;
}

std::optional<Family> familyFromString(const std::string& s) {
  for (Family f : allFamilies())
    if (s == toString(f)) return f;
  return std::nullopt;
}

const std::vector<Section>& allSections() {
  static const std::vector<Section> v{Section::Model,     Section::Dataset, Section::Training,
                                      Section::Network,   Section::Optimizer, Section::Compile,
                                      Section::Saving,    Section::Sample,  Section::Logging};
  return v;
}

const std::vector<Tab>& allTabs() {
  static const std::vector<Tab> v{Tab::LoRA, Tab::DreamBooth, Tab::FineTune, Tab::TextualInversion};
  return v;
}

const std::vector<Tab>& allTrainingTypes() { return allTabs(); }

bool tabTrainsFamily(Tab t, Family f) {
  return t != Tab::TextualInversion || f == Family::SD15 || f == Family::SD2 || f == Family::SDXL;
}

std::string tabFamilyProblem(Tab t, Family f) {
  if (tabTrainsFamily(t, f)) return {};
  return std::string(toString(t)) + ": " + toString(f) + " has no textual inversion: sd-scripts trains embeddings for SD 1.x, "
         "SD 2.x and SDXL (train_textual_inversion.py, sdxl_train_textual_inversion.py)";
}

const std::vector<Family>& allFamilies() {
  static const std::vector<Family> v{Family::SDXL, Family::FLUX, Family::SD15, Family::SD2, Family::SD3};
  return v;
}

}  // namespace sinter

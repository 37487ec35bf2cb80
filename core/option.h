#pragma once
// The description of one option: everything the TOML reader/writer, argv, validation, --help and
// the app's widgets need. Entries live in registry.cpp, once each.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "value.h"

namespace sinter {

enum class OptionType { Bool, Int, Float, String, Enum, Path, List };

enum class Section { Model, Dataset, Training, Network, Optimizer, Compile, Saving, Sample, Logging };

// TextualInversion: sd-scripts' train_textual_inversion.py (kohya_ss's fourth tab), for SD 1.x/2.x
// and SDXL only (tabTrainsFamily).
enum class Tab : std::uint8_t { LoRA = 1, DreamBooth = 2, FineTune = 4, TextualInversion = 8 };
// DreamBooth and fine-tune train the models' own weights; LoRA and textual inversion train what
// they add to frozen models.
constexpr bool trainsFullWeights(Tab t) { return t == Tab::DreamBooth || t == Tab::FineTune; }
enum class Family : std::uint8_t { SDXL = 1, FLUX = 2, SD15 = 4, SD2 = 8, SD3 = 16 };
// The family assumed where none is said or detected yet (the app's first view, the runner's tools).
constexpr Family kDefaultFamily = Family::SDXL;

constexpr std::uint8_t kAllTabs = 1 | 2 | 4 | 8;
constexpr std::uint8_t kAllFamilies = 1 | 2 | 4 | 8 | 16;

// Which values mean "unset" and are therefore never written.
enum class UnsetRule : std::uint8_t {
  Empty,   // only the empty value (None, "", empty list): the rule for every option
  Zero,    // also 0: "0 = use the default" (compile_cache_size_limit)
  Auto,    // also the enum value "auto" (compile_dynamic, model_family)
};

enum class PathKind : std::uint8_t { None, File, Directory };

struct OptionSpec {
  const char* key;            // sd-scripts spelling
  OptionType type;
  Value defaultValue;         // monostate: no default (None)
  Section section;
  std::uint8_t tabs = kAllTabs;
  std::uint8_t families = kAllFamilies;
  const char* label;          // translatable (context "Option")
  const char* tooltip;        // translatable (context "Option")
  std::vector<std::string> choices;  // Enum: allowed values; Int: allowed values if not empty
  std::optional<double> minValue;    // Int/Float inclusive range
  std::optional<double> maxValue;
  UnsetRule unset = UnsetRule::Empty;
  PathKind pathKind = PathKind::None;
  bool secret = false;        // never written to a config or preset
  bool deprecated = false;
  bool advanced = false;      // the app shows it under Parameters > Advanced
  // Translatable (context "Option"): what leaving it unset means, the app's placeholder text
  // ("bundled": the tokenizer that ships with Sinter). nullptr: "Not set".
  const char* unsetMeaning = nullptr;
  std::vector<std::string> suggestions;  // String: common values (editable choice in the app)
  // sd-scripts takes several values (nargs="*") and its networks.lora uses the first: a list in a
  // config or several values on the command line give the first; this says what the others are for.
  const char* firstOfSdScriptsList = nullptr;
  // With firstOfSdScriptsList: the options the second, third... values set, where one of
  // sd-scripts' networks reads them (text_encoder_lr's second value is networks.lora_flux's T5-XXL
  // rate, t5xxl_lr; its third networks.lora_sd3's T5-XXL rate, sd3_t5xxl_lr).
  std::vector<const char*> laterOfSdScriptsList;

  bool appliesToTab(Tab t) const { return (tabs & static_cast<std::uint8_t>(t)) != 0; }
  bool appliesToFamily(Family f) const { return (families & static_cast<std::uint8_t>(f)) != 0; }
  // True when the value means "unset" under this option's rule (never written).
  bool isUnsetValue(const Value& v) const;
};

const char* toString(OptionType t);
const char* toString(Section s);
const char* toString(Tab t);
const char* toString(Family f);
std::optional<Tab> tabFromString(const std::string& s);  // "lora", "dreambooth", "finetune", "textual_inversion"
std::optional<Family> familyFromString(const std::string& s);  // "sdxl", "flux", "sd15", "sd2", "sd3"
const std::vector<Section>& allSections();
const std::vector<Tab>& allTabs();  // the app's training tabs, one per training_type
const std::vector<Tab>& allTrainingTypes();  // every training_type (the same list: each has its tab)
// Whether the tab trains the family: textual inversion has SD 1.x, SD 2.x and SDXL (sd-scripts'
// train_textual_inversion.py and sdxl_train_textual_inversion.py); the other tabs every family.
bool tabTrainsFamily(Tab t, Family f);
// The error for a tab and a family it does not train ("textual_inversion: flux has no textual
// inversion: ..."); empty where it trains it.
std::string tabFamilyProblem(Tab t, Family f);
const std::vector<Family>& allFamilies();

}  // namespace sinter

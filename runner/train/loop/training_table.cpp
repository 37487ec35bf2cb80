#include "train/loop/training_table.h"

#include <functional>
#include <stdexcept>
#include <vector>

#include "train/methods/full_weights_method.h"
#include "train/methods/lora_method.h"
#include "train/methods/textual_inversion_method.h"
#include "train/parts/family_registration.h"

namespace sinter::train {

namespace {

struct TableEntry {
  Family family;
  Tab tab;
  std::function<TrainingParts(const RunContext&)> make;
};

TrainingParts lora(const FamilyRegistration& family, const RunContext& run) {
  std::unique_ptr<FamilyPart> part = family.make(run);
  return TrainingParts{std::move(part), std::make_unique<LoraMethod>(run)};
}

TrainingParts fullWeights(const FamilyRegistration& family, const RunContext& run) {
  auto method = std::make_unique<FullWeightsMethod>(run);  // refuses what it cannot train before any model loads
  return TrainingParts{family.make(run), std::move(method)};
}

TrainingParts textualInversion(const FamilyRegistration& family, const RunContext& run) {
  auto method = std::make_unique<TextualInversionMethod>(run);  // refuses what it cannot train before any model loads
  return TrainingParts{family.make(run), std::move(method)};
}

// Every registered family (train/families.cpp) with LoRA, then each with DreamBooth and fine-tune,
// which differ in their datasets (reg images, captions), not in what trains, then the families
// that train embeddings with textual inversion.
const std::vector<TableEntry>& table() {
  static const std::vector<TableEntry> entries = [] {
    std::vector<TableEntry> rows;
    for (const FamilyRegistration& f : registeredFamilies())
      rows.push_back({f.family, Tab::LoRA, [&f](const RunContext& run) { return lora(f, run); }});
    for (const FamilyRegistration& f : registeredFamilies())
      for (Tab tab : {Tab::DreamBooth, Tab::FineTune})
        rows.push_back({f.family, tab, [&f](const RunContext& run) { return fullWeights(f, run); }});
    for (const FamilyRegistration& f : registeredFamilies())
      if (f.textualInversion)
        rows.push_back({f.family, Tab::TextualInversion, [&f](const RunContext& run) { return textualInversion(f, run); }});
    return rows;
  }();
  return entries;
}

}  // namespace

std::optional<std::string> notBuiltReason(Family family, Tab tab) {
  bool familyBuilt = false;
  for (const TableEntry& e : table()) {
    if (e.family == family && e.tab == tab) return std::nullopt;
    familyBuilt = familyBuilt || e.family == family;
  }
  std::string built;
  for (const TableEntry& e : table()) built += std::string(built.empty() ? "" : ", ") + toString(e.family) + " " + toString(e.tab);
  if (!familyBuilt) return std::string("training ") + toString(family) + " is not in this build yet (this build trains: " + built + ")";
  if (tab == Tab::TextualInversion)
    return std::string("textual_inversion: ") + toString(family) + " has no textual inversion: sd-scripts trains embeddings for SD 1.x, "
           "SD 2.x and SDXL (train_textual_inversion.py, sdxl_train_textual_inversion.py), and so does this build";
  return std::string(toString(tab)) + " training of " + toString(family) + " is not in this build yet (this build trains: " + built + ")";
}

TrainingParts makeTrainingParts(const RunContext& run, Family family, Tab tab) {
  for (const TableEntry& e : table())
    if (e.family == family && e.tab == tab) return e.make(run);
  throw std::logic_error(notBuiltReason(family, tab).value_or("no parts"));
}

}  // namespace sinter::train

#include "train/training_table.h"

#include <functional>
#include <stdexcept>
#include <vector>

#include "train/flux_family.h"
#include "train/lora_method.h"
#include "train/sdxl_family.h"

namespace sinter::train {

namespace {

struct TableEntry {
  Family family;
  Tab tab;
  std::function<TrainingParts(const RunContext&)> make;
};

const std::vector<TableEntry>& table() {
  static const std::vector<TableEntry> entries{
      {Family::SDXL, Tab::LoRA,
       [](const RunContext& run) { return TrainingParts{std::make_unique<SdxlFamily>(run), std::make_unique<LoraMethod>(run)}; }},
      {Family::FLUX, Tab::LoRA,
       [](const RunContext& run) { return TrainingParts{std::make_unique<FluxFamily>(run), std::make_unique<LoraMethod>(run)}; }},
  };
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
  return std::string(toString(tab)) + " training of " + toString(family) + " is not in this build yet (this build trains: " + built + ")";
}

TrainingParts makeTrainingParts(const RunContext& run, Family family, Tab tab) {
  for (const TableEntry& e : table())
    if (e.family == family && e.tab == tab) return e.make(run);
  throw std::logic_error(notBuiltReason(family, tab).value_or("no parts"));
}

}  // namespace sinter::train

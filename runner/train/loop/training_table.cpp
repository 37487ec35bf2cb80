#include "train/loop/training_table.h"

#include <functional>
#include <stdexcept>
#include <vector>

#include "train/flux/flux_family.h"
#include "train/methods/full_weights_method.h"
#include "train/methods/lora_method.h"
#include "train/sdxl/sdxl_family.h"

namespace sinter::train {

namespace {

struct TableEntry {
  Family family;
  Tab tab;
  std::function<TrainingParts(const RunContext&)> make;
};

template <typename FamilyType>
TrainingParts fullWeights(const RunContext& run) {
  auto method = std::make_unique<FullWeightsMethod>(run);  // refuses what it cannot train before any model loads
  return TrainingParts{std::make_unique<FamilyType>(run), std::move(method)};
}

const std::vector<TableEntry>& table() {
  static const std::vector<TableEntry> entries{
      {Family::SDXL, Tab::LoRA,
       [](const RunContext& run) { return TrainingParts{std::make_unique<SdxlFamily>(run), std::make_unique<LoraMethod>(run)}; }},
      {Family::FLUX, Tab::LoRA,
       [](const RunContext& run) { return TrainingParts{std::make_unique<FluxFamily>(run), std::make_unique<LoraMethod>(run)}; }},
      // DreamBooth and fine-tune differ in their datasets (reg images, captions), not in what trains.
      {Family::SDXL, Tab::DreamBooth, fullWeights<SdxlFamily>},
      {Family::SDXL, Tab::FineTune, fullWeights<SdxlFamily>},
      {Family::FLUX, Tab::DreamBooth, fullWeights<FluxFamily>},
      {Family::FLUX, Tab::FineTune, fullWeights<FluxFamily>},
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

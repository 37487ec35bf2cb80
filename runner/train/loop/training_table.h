#pragma once
// Which (model family, training method) pairs this build trains, and the parts each is made of.
// Everything else is refused by name before any work (the preflight asks this table).
#include <memory>
#include <optional>
#include <string>

#include "core/option.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

struct TrainingParts {
  std::unique_ptr<FamilyPart> family;
  std::unique_ptr<MethodPart> method;
};

// nullopt when `family` x `tab` is built; otherwise why not, for the user.
std::optional<std::string> notBuiltReason(Family family, Tab tab);

// The parts for a pair that is built (the family part loads its models).
TrainingParts makeTrainingParts(const RunContext& run, Family family, Tab tab);

}  // namespace sinter::train

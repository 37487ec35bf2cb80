#include "train/parts/family_registration.h"

#include <stdexcept>

namespace sinter::train {

const FamilyRegistration* findRegisteredFamily(Family family) {
  for (const FamilyRegistration& r : registeredFamilies())
    if (r.family == family) return &r;
  return nullptr;
}

std::string stagedTextEncodersFor(const Config& config) {
  const FamilyRegistration* r = config.family() ? findRegisteredFamily(*config.family()) : nullptr;
  return r && r->stagedTextEncoders ? r->stagedTextEncoders(config) : "";
}

const compile::CompileTargets& compileTargetsFor(std::optional<Family> family) {
  const FamilyRegistration* r = findRegisteredFamily(family.value_or(kDefaultFamily));
  if (!r) r = findRegisteredFamily(kDefaultFamily);
  if (!r) throw std::logic_error("no family registration for the compile plan");
  return r->compileTargets;
}

std::vector<network::LinearShape> layoutShapes(const std::vector<models::LinearInfo>& layers) {
  std::vector<network::LinearShape> out;
  for (const models::LinearInfo& l : layers) out.push_back({l.path, l.in, l.out});
  return out;
}

}  // namespace sinter::train

#include "train/parts/family_registration.h"

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

}  // namespace sinter::train

#include "train/parts/family_registration.h"

namespace sinter::train {

const FamilyRegistration* findRegisteredFamily(Family family) {
  for (const FamilyRegistration& r : registeredFamilies())
    if (r.family == family) return &r;
  return nullptr;
}

}  // namespace sinter::train

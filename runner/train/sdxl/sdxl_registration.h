#pragma once
// SDXL as the generic layers see it (parts/family_registration.h), listed in train/families.cpp.
#include "train/parts/family_registration.h"

namespace sinter::train {

FamilyRegistration sdxlRegistration();

}  // namespace sinter::train

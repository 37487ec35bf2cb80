#pragma once
// SD 1.x and SD 2.x as the generic layers see them (parts/family_registration.h), listed in
// train/families.cpp: one registration each, one family part (sd_family.h) for both.
#include "train/parts/family_registration.h"

namespace sinter::train {

FamilyRegistration sd15Registration();
FamilyRegistration sd2Registration();

}  // namespace sinter::train

#pragma once
// SD 3.x's registration (parts/family_registration.h).
#include "train/parts/family_registration.h"

namespace sinter::train {

FamilyRegistration sd3Registration();

}  // namespace sinter::train

// The model families this build trains: the one file that names the family folders (every other
// layer asks parts/family_registration.h). A new family is its folder and one line here; the
// training table (loop/training_table.cpp) builds LoRA, DreamBooth and fine-tune for each.
#include "train/flux/flux_registration.h"
#include "train/parts/family_registration.h"
#include "train/sd/sd_registration.h"
#include "train/sd3/sd3_registration.h"
#include "train/sdxl/sdxl_registration.h"

namespace sinter::train {

const std::vector<FamilyRegistration>& registeredFamilies() {
  static const std::vector<FamilyRegistration> families{
      sdxlRegistration(),
      fluxRegistration(),
      sd15Registration(),
      sd2Registration(),
      sd3Registration(),
  };
  return families;
}

}  // namespace sinter::train

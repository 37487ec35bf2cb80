#pragma once
// FLUX.1 as the generic layers see it (parts/family_registration.h), listed in train/families.cpp:
// its preflight checks the files flux_train_network takes besides the transformer (--ae, --clip_l,
// --t5xxl), T5's tokenizer, timestep_sampling, fp8_base and blocks_to_swap.
#include "train/parts/family_registration.h"

namespace sinter::train {

FamilyRegistration fluxRegistration();

}  // namespace sinter::train

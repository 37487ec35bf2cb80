#pragma once
// What a run needs beyond a valid config: files that exist, a family that can be determined.
#include <vector>

#include "core/config.h"

namespace sinter::runner {

std::vector<Diagnostic> checkRunInputs(const Config& config);

}  // namespace sinter::runner

#pragma once
// network_dim as the networks read it: sd-scripts' default is None, which networks.lora's and
// lycoris.kohya's create_network take as rank 4. Read here by the memory plan and the runner alike.
#include "core/config.h"

namespace sinter {

constexpr long long kNetworkDimWhenUnset = 4;

long long networkDim(const Config& config);

}  // namespace sinter

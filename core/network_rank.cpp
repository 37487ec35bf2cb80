#include "core/network_rank.h"

namespace sinter {

long long networkDim(const Config& config) {
  return isUnset(config.get("network_dim")) ? kNetworkDimWhenUnset : config.getInt("network_dim");
}

}  // namespace sinter

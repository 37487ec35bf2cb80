#pragma once
// LoRA files made as training makes them, for the LoRA tools' tests: a network attached to tiny
// models by the family's rules, every trained tensor filled at random (training starts lora_up at
// zero), saved with its state dict.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "io/safetensors.h"
#include "network/lora_network.h"

namespace sinter::test {

// A network of rank `dim` at `alpha`, with `networkArgs` read for `networkModule` as a run reads them.
inline network::LoraNetworkOptions loraNetworkOptions(int64_t dim, double alpha, const std::vector<std::string>& networkArgs = {},
                                                      const std::string& networkModule = "networks.lora") {
  network::LoraNetworkOptions options;
  options.dim = dim;
  options.alpha = alpha;
  options.args = network::parseNetworkArgs(networkArgs, networkModule);
  return options;
}

inline void randomizeLoraNetwork(network::LoraNetwork& lora, uint64_t seed) {
  torch::NoGradGuard noGrad;
  torch::manual_seed(seed);
  for (const auto& m : lora.modules())
    for (auto& [name, tensor] : m.trainedTensors()) tensor.normal_(0.0, 0.2);
}

inline void saveLoraNetwork(const network::LoraNetwork& lora, const std::string& path) {
  io::writeSafetensors(path, lora.stateDict(torch::kFloat32), {{"ss_network_module", "networks.lora"}});
}

}  // namespace sinter::test

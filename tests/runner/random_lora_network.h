#pragma once
// LoRA files made as training makes them, for the LoRA tools' tests: a network attached to tiny
// models by the family's rules, every trained tensor filled at random (training starts lora_up at
// zero), saved with its state dict.
#include <torch/torch.h>

#include <string>

#include "io/safetensors.h"
#include "network/lora_network.h"

namespace sinter::test {

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

#pragma once
// Reading the named inputs of --module_outputs (SDXL's and FLUX's modules run on given tensors).
#include <torch/torch.h>

#include <map>
#include <stdexcept>
#include <string>

namespace sinter::train {

// The named input on `device`, or an undefined tensor when absent; a tensor of another rank is
// std::invalid_argument naming it.
inline torch::Tensor moduleInput(const std::map<std::string, torch::Tensor>& inputs, const std::string& name, int64_t rank,
                                 const torch::Device& device) {
  auto it = inputs.find(name);
  if (it == inputs.end()) return {};
  if (it->second.dim() != rank)
    throw std::invalid_argument("module input '" + name + "': " + std::to_string(rank) + " dimensions expected, got " +
                                std::to_string(it->second.dim()));
  return it->second.to(device);
}

}  // namespace sinter::train

#pragma once
// Reading the named inputs of --module_outputs (the families' modules run on given tensors).
#include <torch/torch.h>

#include <map>
#include <stdexcept>
#include <string>
#include <utility>

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

// --prompt's token ids as the input `name` (the chunks of a caption, [chunks, 77]); the module inputs
// giving `name` too is std::invalid_argument.
inline void addPromptInput(std::map<std::string, torch::Tensor>& inputs, const std::string& name, torch::Tensor ids) {
  if (inputs.count(name))
    throw std::invalid_argument("module input '" + name + "' and --prompt both give the text encoders' token ids: give one of them");
  inputs[name] = std::move(ids);
}

}  // namespace sinter::train

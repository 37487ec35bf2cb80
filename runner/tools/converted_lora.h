#pragma once
// A LoRA file's tensors renamed from another trainer's layout, and what had no counterpart.
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

namespace sinter::tools {

struct ConvertedLora {
  std::map<std::string, torch::Tensor> tensors;
  std::vector<std::string> unconverted;  // keys of modules with no counterpart (sd-scripts warns about them too)
};

}  // namespace sinter::tools

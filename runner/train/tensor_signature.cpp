#include "train/tensor_signature.h"

namespace sinter::train {

std::string tensorSignature(const std::vector<torch::Tensor>& inputs) {
  std::string s;
  for (const torch::Tensor& t : inputs) {
    s += std::string(c10::toString(t.scalar_type())) + "[";
    for (int64_t d : t.sizes()) s += std::to_string(d) + ",";
    s += t.requires_grad() ? "]grad" : "]";
  }
  return s;
}

}  // namespace sinter::train

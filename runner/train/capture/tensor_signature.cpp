#include "train/capture/tensor_signature.h"

namespace sinter::train {

namespace {

std::string signature(const std::vector<torch::Tensor>& inputs, bool gradMarks) {
  std::string s;
  for (const torch::Tensor& t : inputs) {
    s += std::string(c10::toString(t.scalar_type())) + "[";
    for (int64_t d : t.sizes()) s += std::to_string(d) + ",";
    s += gradMarks && t.requires_grad() ? "]grad" : "]";
  }
  return s;
}

}  // namespace

std::string tensorSignature(const std::vector<torch::Tensor>& inputs) { return signature(inputs, true); }

std::string shapeSignature(const std::vector<torch::Tensor>& inputs) { return signature(inputs, false); }

}  // namespace sinter::train

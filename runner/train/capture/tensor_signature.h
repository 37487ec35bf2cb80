#pragma once
// What a captured graph is specialised to, of its inputs: each one's dtype and sizes, and whether
// it requires grad ("BFloat16[2,4,128,128,]grad"). Graphs are kept per signature.
#include <torch/torch.h>

#include <string>
#include <vector>

namespace sinter::train {

std::string tensorSignature(const std::vector<torch::Tensor>& inputs);
// The same without the requires-grad marks: what a pass without gradients has in common with one with them.
std::string shapeSignature(const std::vector<torch::Tensor>& inputs);

}  // namespace sinter::train

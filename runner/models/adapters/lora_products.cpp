#include "models/adapters/lora_products.h"

#include <torch/csrc/autograd/graph_task.h>

namespace sinter::models {

torch::Tensor scaledProduct(const torch::Tensor& a, const torch::Tensor& b, double alpha) {
  return torch::empty({a.size(0), b.size(1)}, a.options()).addmm_(a, b, /*beta=*/0.0, alpha);
}

torch::Tensor keptGradient(const torch::Tensor& t) {
  if (!t.is_leaf() || !t.requires_grad()) return {};
  const auto* returnedGradients = torch::autograd::get_current_graph_task_exec_info();
  if (returnedGradients && !returnedGradients->empty()) return {};
  const torch::Tensor& grad = t.grad();
  if (!grad.defined() || grad.scalar_type() != t.scalar_type() || grad.sizes() != t.sizes() || !grad.is_contiguous())
    return {};
  return grad;
}

}  // namespace sinter::models

#include "models/layers/frozen_conv2d.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

namespace sinter::models {

namespace {

// dx = conv_transpose2d(dy, W), W fetched again now; output_padding restores the input's size
// where the stride dropped a row or column.
struct FrozenConv2dBackward : torch::autograd::Node {
  std::shared_ptr<ServedWeight> weight;
  torch::ScalarType dtype = torch::kFloat32;
  int64_t stride = 1, padding = 0;
  std::vector<int64_t> inputSizes;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    const torch::Tensor& dy = grads[0];
    if (!dy.defined()) return {torch::Tensor()};
    const torch::Tensor w = weight->get(dtype);
    std::vector<int64_t> outputPadding(2);
    for (int d = 0; d < 2; ++d)
      outputPadding[d] = inputSizes[2 + d] - ((dy.size(2 + d) - 1) * stride - 2 * padding + w.size(2 + d));
    return {at::conv_transpose2d(dy, w, /*bias=*/{}, {stride, stride}, {padding, padding}, outputPadding)};
  }
  std::string name() const override { return "FrozenConv2dBackward"; }
};

}  // namespace

torch::Tensor frozenConv2d(const torch::Tensor& x, const std::shared_ptr<ServedWeight>& weight, const torch::Tensor& bias, int64_t stride,
                           int64_t padding) {
  const torch::ScalarType dtype = x.scalar_type();
  torch::Tensor y;
  {
    torch::NoGradGuard noGrad;
    y = at::conv2d(x, weight->get(dtype), bias, {stride, stride}, {padding, padding});
  }
  if (torch::GradMode::is_enabled() && x.requires_grad()) {
    auto node = std::shared_ptr<FrozenConv2dBackward>(new FrozenConv2dBackward(), torch::autograd::deleteNode);
    node->weight = weight;
    node->dtype = dtype;
    node->stride = stride;
    node->padding = padding;
    node->inputSizes = x.sizes().vec();
    node->set_next_edges(torch::autograd::collect_next_edges(x));
    torch::autograd::set_history(y, node);
  }
  return y;
}

}  // namespace sinter::models

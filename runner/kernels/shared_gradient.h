#pragma once
// One gradient buffer for the parts of a tensor split along its last dimension, when the parts'
// consumers write their input gradients at different times of the backward pass. FLUX's single
// block splits linear1's output into q/k/v and the MLP's input; the fused QK and GELU-join
// kernels write their part of linear1's output gradient straight into the shared buffer, and the
// split's backward hands the buffer on, where autograd would concatenate the two gradients (a copy
// of [tokens, 21504] per block and step).
#include <torch/torch.h>

#include <vector>

namespace sinter::kernels {

class SharedGradient : public torch::CustomClassHolder {
 public:
  SharedGradient(std::vector<int64_t> sizes, std::vector<int64_t> widths, torch::TensorOptions options);

  // Part i's columns of the buffer, to write part i's gradient into; the buffer is allocated by
  // whichever part asks first.
  torch::Tensor part(size_t i);

  // The gradient of the split tensor from the parts' gradients: the buffer, with the parts not
  // written into it copied in (zeros for an undefined gradient). The holder lets go of the buffer.
  torch::Tensor assemble(const std::vector<torch::Tensor>& partGradients);

  size_t parts() const { return widths_.size(); }

 private:
  torch::Tensor columns(const torch::Tensor& whole, size_t i) const;

  std::vector<int64_t> sizes_, widths_;  // the split tensor's sizes; the parts' widths
  torch::TensorOptions options_;
  torch::Tensor whole_;
};

// Where a fused kernel's backward pass writes its input's gradient: part `part` of a shared
// gradient, or (no shared gradient) a fresh tensor.
struct GradientInto {
  c10::intrusive_ptr<SharedGradient> shared;
  int64_t part = 0;
};

struct SplitSharingGradient {
  std::vector<torch::Tensor> parts;  // views of the split tensor, as split_with_sizes gives
  c10::intrusive_ptr<SharedGradient> gradient;  // for the parts' consumers' backward passes
  GradientInto into(int64_t part) const { return {gradient, part}; }
};

// y's last dimension split into `widths` (summing to its size), differentiable: the split's
// backward assembles y's gradient with SharedGradient::assemble.
SplitSharingGradient splitSharingGradient(const torch::Tensor& y, const std::vector<int64_t>& widths);

// For an autograd function's forward: keeps `into` in the context for its backward pass (throws
// if the shared gradient has no such part).
void keepGradientInto(torch::autograd::AutogradContext* ctx, const GradientInto& into);
// For its backward pass: the tensor to write the input's gradient into, the kept shared gradient's
// part or a fresh tensor shaped as `input`.
torch::Tensor gradientInto(torch::autograd::AutogradContext* ctx, const torch::Tensor& input);

}  // namespace sinter::kernels

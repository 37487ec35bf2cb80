#pragma once
// GroupNorm computed in float32 whatever the activations' dtype (the original UNet's GroupNorm32):
// bf16/fp16 statistics over large groups are too coarse.
#include <torch/torch.h>

namespace sinter::models {

class GroupNorm32Impl : public torch::nn::Module {
 public:
  GroupNorm32Impl(int64_t groups, int64_t channels, double eps = 1e-5);
  torch::Tensor forward(const torch::Tensor& x);
  // silu(forward(x)); fused (a CUDA x): one kernel each way, kernels::groupNormSilu.
  torch::Tensor forwardThenSilu(const torch::Tensor& x, bool fused);

  torch::Tensor weight;
  torch::Tensor bias;

 private:
  int64_t groups_;
  double eps_;
};
TORCH_MODULE(GroupNorm32);

}  // namespace sinter::models

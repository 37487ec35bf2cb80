#pragma once
// GroupNorm computed in float32 whatever the activations' dtype (the original UNet's GroupNorm32):
// bf16/fp16 statistics over large groups are too coarse. A channels_last x gives a channels_last
// output (ATen's group_norm keeps it on the CPU; the fused kernels read it as NHWC on CUDA).
#include <torch/torch.h>

namespace sinter::models {

class GroupNorm32Impl : public torch::nn::Module {
 public:
  GroupNorm32Impl(int64_t groups, int64_t channels, double eps = 1e-5);
  torch::Tensor forward(const torch::Tensor& x);
  // forward(x); fused (a CUDA x): one kernel each way, kernels::groupNorm.
  torch::Tensor normalize(const torch::Tensor& x, bool fused);
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

#pragma once
// The SDXL UNet's building blocks, named after the checkpoint's keys (sgm's openaimodel.py and
// attention.py): ResBlock, SpatialTransformer with BasicTransformerBlocks, Downsample, Upsample.
#include <torch/torch.h>

#include "models/layers/attention.h"
#include "models/layers/conv2d.h"
#include "models/layers/group_norm32.h"
#include "models/layers/linear.h"

namespace sinter::models {

// A normalise-activate-convolve stack: layers[0] (GroupNorm32) and layers[1] (SiLU) as
// GroupNorm32::forwardThenSilu, then the remaining layers in order.
torch::Tensor normSiluThen(torch::nn::Sequential& layers, const torch::Tensor& x, bool fused);

// h = out_layers(in_layers(x) + emb_layers(emb)); return skip_connection(x) + h
class ResBlockImpl : public torch::nn::Module {
 public:
  ResBlockImpl(int64_t inChannels, int64_t outChannels, int64_t embDim, int64_t groups);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& emb);

  torch::nn::Sequential in_layers{nullptr};   // 0: GroupNorm32, 1: SiLU, 2: Conv 3x3
  torch::nn::Sequential emb_layers{nullptr};  // 0: SiLU, 1: Linear
  torch::nn::Sequential out_layers{nullptr};  // 0: GroupNorm32, 1: SiLU, 2: Dropout, 3: Conv 3x3
  Conv2d skip_connection{nullptr};  // 1x1 where the channel count changes
  bool fused = false;  // on CUDA: each GroupNorm32 and SiLU as one kernel each way (kernels/fused_kernels.h)
};
TORCH_MODULE(ResBlock);

// GEGLU: proj gives value and gate; value * gelu(gate).
class GegluImpl : public torch::nn::Module {
 public:
  GegluImpl(int64_t dimIn, int64_t dimOut);
  torch::Tensor forward(const torch::Tensor& x);
  Linear proj{nullptr};
  bool fused = false;  // on CUDA: the activation as one kernel each way (kernels/fused_kernels.h)
};
TORCH_MODULE(Geglu);

class FeedForwardImpl : public torch::nn::Module {
 public:
  explicit FeedForwardImpl(int64_t dim);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Sequential net{nullptr};  // 0: GEGLU (net.0.proj), 1: Dropout, 2: Linear
};
TORCH_MODULE(FeedForward);

// x += attn1(norm1(x)); x += attn2(norm2(x), context); x += ff(norm3(x))
class BasicTransformerBlockImpl : public torch::nn::Module {
 public:
  BasicTransformerBlockImpl(int64_t dim, int64_t heads, int64_t headDim, int64_t contextDim);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context);

  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};
  CrossAttention attn1{nullptr}, attn2{nullptr};
  FeedForward ff{nullptr};
};
TORCH_MODULE(BasicTransformerBlock);

// GroupNorm, projection in, transformer blocks over the h*w tokens, projection out, plus the input.
// The projections are Linears on the tokens (SDXL, SD 2.x: use_linear_in_transformer) or 1x1
// convolutions on the feature map (SD 1.x), under the same key names.
class SpatialTransformerImpl : public torch::nn::Module {
 public:
  SpatialTransformerImpl(int64_t channels, int64_t heads, int64_t depth, int64_t contextDim, int64_t groups,
                         bool linearProjection = true);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context);

  GroupNorm32 norm{nullptr};
  Linear proj_in{nullptr}, proj_out{nullptr};            // linear projections
  Conv2d proj_in_conv{nullptr}, proj_out_conv{nullptr};  // or 1x1 convs, registered as proj_in / proj_out
  torch::nn::ModuleList transformer_blocks{nullptr};
  bool fused = false;  // on CUDA: `norm` as one kernel each way (kernels/fused_kernels.h)

 private:
  std::vector<BasicTransformerBlock> blocks_;
};
TORCH_MODULE(SpatialTransformer);

class DownsampleImpl : public torch::nn::Module {  // 3x3 conv, stride 2
 public:
  explicit DownsampleImpl(int64_t channels);
  torch::Tensor forward(const torch::Tensor& x) { return op(x); }
  Conv2d op{nullptr};
};
TORCH_MODULE(Downsample);

class UpsampleImpl : public torch::nn::Module {  // nearest x2, then 3x3 conv
 public:
  explicit UpsampleImpl(int64_t channels);
  torch::Tensor forward(const torch::Tensor& x);
  Conv2d conv{nullptr};
};
TORCH_MODULE(Upsample);

}  // namespace sinter::models

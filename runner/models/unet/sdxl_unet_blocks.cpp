#include "models/unet/sdxl_unet_blocks.h"

#include "kernels/fused_kernels.h"

namespace sinter::models {

namespace F = torch::nn::functional;

namespace {

// models::Conv2d, so that conv_dim can put a LoRA on them (sd-scripts' Conv2d 3x3 targets).
Conv2d conv3x3(int64_t in, int64_t out, int64_t stride = 1) { return Conv2d(in, out, 3, stride, /*padding=*/1); }

}  // namespace

torch::Tensor normSiluThen(torch::nn::Sequential& layers, const torch::Tensor& x, bool fused) {
  torch::Tensor h = layers->ptr<GroupNorm32Impl>(0)->forwardThenSilu(x, fused);
  for (auto layer = layers->begin() + 2; layer != layers->end(); ++layer) h = layer->forward(h);
  return h;
}

ResBlockImpl::ResBlockImpl(int64_t inChannels, int64_t outChannels, int64_t embDim, int64_t groups) {
  in_layers = register_module("in_layers", torch::nn::Sequential(GroupNorm32(groups, inChannels), torch::nn::SiLU(),
                                                                 conv3x3(inChannels, outChannels)));
  emb_layers = register_module("emb_layers", torch::nn::Sequential(torch::nn::SiLU(), Linear(embDim, outChannels)));
  out_layers = register_module("out_layers",
                               torch::nn::Sequential(GroupNorm32(groups, outChannels), torch::nn::SiLU(),
                                                     torch::nn::Dropout(0.0), conv3x3(outChannels, outChannels)));
  if (inChannels != outChannels)
    skip_connection = register_module("skip_connection",
                                      Conv2d(inChannels, outChannels, 1));
}

torch::Tensor ResBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& emb) {
  torch::Tensor h = normSiluThen(in_layers, x, fused);
  h = h + emb_layers->forward(emb).to(h.scalar_type()).unsqueeze(-1).unsqueeze(-1);
  h = normSiluThen(out_layers, h, fused);
  return (skip_connection ? skip_connection(x) : x) + h;
}

GegluImpl::GegluImpl(int64_t dimIn, int64_t dimOut) { proj = register_module("proj", Linear(dimIn, dimOut * 2)); }

torch::Tensor GegluImpl::forward(const torch::Tensor& x) {
  if (fused && x.is_cuda()) return kernels::geglu(proj(x));
  const auto parts = proj(x).chunk(2, -1);
  return parts[0] * F::gelu(parts[1]);
}

FeedForwardImpl::FeedForwardImpl(int64_t dim) {
  const int64_t inner = dim * 4;
  // The output layer first, as sdxl_unet.cpp's time_embed says why.
  Linear output(inner, dim);
  Geglu input(dim, inner);
  net = register_module("net", torch::nn::Sequential(input, torch::nn::Dropout(0.0), output));
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) { return net->forward(x); }

BasicTransformerBlockImpl::BasicTransformerBlockImpl(int64_t dim, int64_t heads, int64_t headDim, int64_t contextDim) {
  norm1 = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
  attn1 = register_module("attn1", CrossAttention(dim, dim, heads, headDim));
  norm2 = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
  attn2 = register_module("attn2", CrossAttention(dim, contextDim, heads, headDim));
  norm3 = register_module("norm3", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
  ff = register_module("ff", FeedForward(dim));
}

torch::Tensor BasicTransformerBlockImpl::forward(const torch::Tensor& input, const torch::Tensor& context) {
  torch::Tensor x = attn1(norm1(input)) + input;
  x = attn2(norm2(x), context) + x;
  return ff(norm3(x)) + x;
}

SpatialTransformerImpl::SpatialTransformerImpl(int64_t channels, int64_t heads, int64_t depth, int64_t contextDim,
                                               int64_t groups, bool linearProjection) {
  norm = register_module("norm", GroupNorm32(groups, channels, 1e-6));
  if (linearProjection) proj_in = register_module("proj_in", Linear(channels, channels));
  else proj_in_conv = register_module("proj_in", Conv2d(channels, channels, 1));
  transformer_blocks = register_module("transformer_blocks", torch::nn::ModuleList());
  for (int64_t k = 0; k < depth; ++k) {
    blocks_.push_back(BasicTransformerBlock(channels, heads, channels / heads, contextDim));
    transformer_blocks->push_back(blocks_.back());
  }
  if (linearProjection) proj_out = register_module("proj_out", Linear(channels, channels));
  else proj_out_conv = register_module("proj_out", Conv2d(channels, channels, 1));
}

torch::Tensor SpatialTransformerImpl::forward(const torch::Tensor& x, const torch::Tensor& context) {
  const int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  // [b, c, h, w] <-> [b, h*w, c]: one token per position. A channels_last map is [b, h, w, c] in
  // memory: both ways are views, no copy (SdxlUnetImpl::setChannelsLast).
  auto toTokens = [&](const torch::Tensor& map) { return map.permute({0, 2, 3, 1}).reshape({b, h * w, c}); };
  auto toMap = [&](const torch::Tensor& tokens) { return tokens.reshape({b, h, w, c}).permute({0, 3, 1, 2}); };
  const torch::Tensor normed = norm->normalize(x, fused);
  torch::Tensor tokens = proj_in ? proj_in(toTokens(normed)) : toTokens(proj_in_conv(normed));
  for (BasicTransformerBlock& block : blocks_) tokens = block(tokens, context);
  return (proj_out ? toMap(proj_out(tokens)) : proj_out_conv(toMap(tokens))) + x;
}

DownsampleImpl::DownsampleImpl(int64_t channels) { op = register_module("op", conv3x3(channels, channels, 2)); }

UpsampleImpl::UpsampleImpl(int64_t channels) { conv = register_module("conv", conv3x3(channels, channels)); }

torch::Tensor UpsampleImpl::forward(const torch::Tensor& x) {
  return conv(F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0, 2.0}).mode(torch::kNearest)));
}

}  // namespace sinter::models

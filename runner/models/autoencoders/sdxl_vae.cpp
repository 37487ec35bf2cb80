#include "models/autoencoders/sdxl_vae.h"

#include <cmath>
#include <stdexcept>

#include "io/safetensors.h"
#include "models/layers/attention.h"
#include "models/checkpoints/checkpoint_tensors.h"

namespace sinter::models {

namespace F = torch::nn::functional;

namespace {

torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1, int64_t padding = -1) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding < 0 ? kernel / 2 : padding));
}

torch::Tensor swish(const torch::Tensor& x) { return x * torch::sigmoid(x); }

// Holds the resampling conv as "<downsample|upsample>.conv".
struct ConvHolder : torch::nn::Module {
  torch::nn::Conv2d conv{nullptr};
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Config

SdxlVaeConfig SdxlVaeConfig::full() { return SdxlVaeConfig{}; }

SdxlVaeConfig SdxlVaeConfig::tiny() {
  SdxlVaeConfig c;
  c.channels = 32;
  c.channelMult = {1, 2};
  c.numResBlocks = 1;
  return c;
}

void SdxlVaeConfig::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("SDXL VAE config: " + what); };
  if (channelMult.empty()) fail("channel_mult is empty");
  if (channels <= 0 || numResBlocks <= 0 || zChannels <= 0 || embedDim <= 0 || inChannels <= 0)
    fail("sizes must be positive");
  for (int64_t m : channelMult)
    if ((channels * m) % normGroups) fail("channels " + std::to_string(channels * m) + " are not a multiple of " +
                                         std::to_string(normGroups) + " groups");
}

bool SdxlVaeConfig::operator==(const SdxlVaeConfig& o) const {
  return inChannels == o.inChannels && channels == o.channels && channelMult == o.channelMult &&
         numResBlocks == o.numResBlocks && zChannels == o.zChannels && embedDim == o.embedDim &&
         normGroups == o.normGroups && scalingFactor == o.scalingFactor;
}

SdxlVaeConfig SdxlVaeConfig::inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  const std::string model = "SDXL VAE";
  SdxlVaeConfig c;
  const auto convIn = requireShape(file, prefix, "encoder.conv_in.weight", model);
  c.channels = convIn[0];
  c.inChannels = convIn[1];
  c.zChannels = requireShape(file, prefix, "encoder.conv_out.weight", model)[0] / 2;
  c.embedDim = requireShape(file, prefix, "quant_conv.weight", model)[0] / 2;
  c.channelMult.clear();
  for (int64_t i = 0; file.has(prefix + "encoder.down." + std::to_string(i) + ".block.0.conv2.weight"); ++i)
    c.channelMult.push_back(file.info(prefix + "encoder.down." + std::to_string(i) + ".block.0.conv2.weight").shape[0] /
                            c.channels);
  if (c.channelMult.empty()) requireShape(file, prefix, "encoder.down.0.block.0.conv2.weight", model);
  c.numResBlocks = 0;
  while (file.has(prefix + "encoder.down.0.block." + std::to_string(c.numResBlocks) + ".conv1.weight")) ++c.numResBlocks;
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(file.path() + ": " + e.what());
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Blocks

VaeResnetBlockImpl::VaeResnetBlockImpl(int64_t in, int64_t out, int64_t groups) {
  norm1 = register_module("norm1", GroupNorm32(groups, in, 1e-6));
  conv1 = register_module("conv1", conv(in, out, 3));
  norm2 = register_module("norm2", GroupNorm32(groups, out, 1e-6));
  conv2 = register_module("conv2", conv(out, out, 3));
  if (in != out) nin_shortcut = register_module("nin_shortcut", conv(in, out, 1));
}

torch::Tensor VaeResnetBlockImpl::forward(const torch::Tensor& x) {
  torch::Tensor h = conv1(swish(norm1(x)));
  h = conv2(swish(norm2(h)));
  return (nin_shortcut ? nin_shortcut(x) : x) + h;
}

VaeAttnBlockImpl::VaeAttnBlockImpl(int64_t channels, int64_t groups) {
  norm = register_module("norm", GroupNorm32(groups, channels, 1e-6));
  q = register_module("q", conv(channels, channels, 1));
  k = register_module("k", conv(channels, channels, 1));
  v = register_module("v", conv(channels, channels, 1));
  proj_out = register_module("proj_out", conv(channels, channels, 1));
}

torch::Tensor VaeAttnBlockImpl::forward(const torch::Tensor& x) {
  const int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const torch::Tensor n = norm(x);
  // [b, c, h, w] -> [b, 1 head, h*w, c]
  auto tokens = [&](const torch::Tensor& t) { return t.reshape({b, 1, c, h * w}).transpose(-1, -2); };
  const torch::Tensor attended = chunkedScaledDotProductAttention(tokens(q(n)), tokens(k(n)), tokens(v(n)), kMaxScoreElements);
  return x + proj_out(attended.transpose(-1, -2).reshape({b, c, h, w}));
}

VaeMidImpl::VaeMidImpl(int64_t channels, int64_t groups) {
  block_1 = register_module("block_1", VaeResnetBlock(channels, channels, groups));
  attn_1 = register_module("attn_1", VaeAttnBlock(channels, groups));
  block_2 = register_module("block_2", VaeResnetBlock(channels, channels, groups));
}

torch::Tensor VaeMidImpl::forward(const torch::Tensor& x) { return block_2(attn_1(block_1(x))); }

VaeLevelImpl::VaeLevelImpl(int64_t in, int64_t out, int64_t blocks, Resample resample, int64_t groups)
    : resample_(resample) {
  block = register_module("block", torch::nn::ModuleList());
  for (int64_t j = 0; j < blocks; ++j) {
    blocks_.push_back(VaeResnetBlock(j == 0 ? in : out, out, groups));
    block->push_back(blocks_.back());
  }
  if (resample != Resample::None) {
    auto holder = std::make_shared<ConvHolder>();
    // Downsampling pads right and bottom by one, then a 3x3 stride-2 conv without padding.
    holder->conv = holder->register_module("conv", resample == Resample::Down ? conv(out, out, 3, 2, 0) : conv(out, out, 3));
    conv_ = holder->conv;
    register_module(resample == Resample::Down ? "downsample" : "upsample", holder);
  }
}

torch::Tensor VaeLevelImpl::forward(const torch::Tensor& x) {
  torch::Tensor h = x;
  for (VaeResnetBlock& b : blocks_) h = b(h);
  if (resample_ == Resample::Down) h = conv_(F::pad(h, F::PadFuncOptions({0, 1, 0, 1})));
  if (resample_ == Resample::Up)
    h = conv_(F::interpolate(h, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0, 2.0}).mode(torch::kNearest)));
  return h;
}

VaeEncoderImpl::VaeEncoderImpl(const SdxlVaeConfig& c) {
  conv_in = register_module("conv_in", conv(c.inChannels, c.channels, 3));
  down = register_module("down", torch::nn::ModuleList());
  int64_t blockIn = c.channels;
  for (size_t i = 0; i < c.channelMult.size(); ++i) {
    const int64_t blockOut = c.channels * c.channelMult[i];
    const bool last = i + 1 == c.channelMult.size();
    levels_.push_back(VaeLevel(blockIn, blockOut, c.numResBlocks,
                               last ? VaeLevelImpl::Resample::None : VaeLevelImpl::Resample::Down, c.normGroups));
    down->push_back(levels_.back());
    blockIn = blockOut;
  }
  mid = register_module("mid", VaeMid(blockIn, c.normGroups));
  norm_out = register_module("norm_out", GroupNorm32(c.normGroups, blockIn, 1e-6));
  conv_out = register_module("conv_out", conv(blockIn, 2 * c.zChannels, 3));
}

torch::Tensor VaeEncoderImpl::forward(const torch::Tensor& x) {
  torch::Tensor h = conv_in(x);
  for (VaeLevel& level : levels_) h = level(h);
  return conv_out(swish(norm_out(mid(h))));
}

VaeDecoderImpl::VaeDecoderImpl(const SdxlVaeConfig& c) {
  const size_t levels = c.channelMult.size();
  int64_t blockIn = c.channels * c.channelMult.back();
  conv_in = register_module("conv_in", conv(c.zChannels, blockIn, 3));
  mid = register_module("mid", VaeMid(blockIn, c.normGroups));
  // Built from the lowest resolution up, registered by level index (up.0 = full resolution).
  std::vector<VaeLevel> built(levels, nullptr);
  for (size_t i = levels; i-- > 0;) {
    const int64_t blockOut = c.channels * c.channelMult[i];
    built[i] = VaeLevel(blockIn, blockOut, c.numResBlocks + 1,
                        i == 0 ? VaeLevelImpl::Resample::None : VaeLevelImpl::Resample::Up, c.normGroups);
    blockIn = blockOut;
  }
  up = register_module("up", torch::nn::ModuleList());
  for (VaeLevel& level : built) up->push_back(level);
  levels_.assign(built.rbegin(), built.rend());  // run order
  norm_out = register_module("norm_out", GroupNorm32(c.normGroups, blockIn, 1e-6));
  conv_out = register_module("conv_out", conv(blockIn, c.inChannels, 3));
}

torch::Tensor VaeDecoderImpl::forward(const torch::Tensor& z) {
  torch::Tensor h = mid(conv_in(z));
  for (VaeLevel& level : levels_) h = level(h);
  return conv_out(swish(norm_out(h)));
}

// ---------------------------------------------------------------------------------------------
// The VAE

torch::Tensor LatentDistribution::sample(const c10::optional<at::Generator>& generator) const {
  return mean + torch::exp(0.5 * logvar) * at::randn(mean.sizes(), generator, mean.options());
}

SdxlVaeImpl::SdxlVaeImpl(const SdxlVaeConfig& config) : config_(config) {
  config.validate();
  encoder = register_module("encoder", VaeEncoder(config));
  decoder = register_module("decoder", VaeDecoder(config));
  quant_conv = register_module("quant_conv", conv(2 * config.zChannels, 2 * config.embedDim, 1));
  post_quant_conv = register_module("post_quant_conv", conv(config.embedDim, config.zChannels, 1));
}

LatentDistribution SdxlVaeImpl::encode(const torch::Tensor& images) {
  const int64_t f = config_.downscale();
  if (images.dim() != 4 || images.size(1) != config_.inChannels || images.size(2) % f || images.size(3) % f)
    throw std::invalid_argument("SDXL VAE: images must be [batch, " + std::to_string(config_.inChannels) +
                                ", h, w] with h and w multiples of " + std::to_string(f) + ", got " +
                                c10::str(images.sizes()));
  const auto moments = quant_conv(encoder(images)).chunk(2, 1);
  return {moments[0], torch::clamp(moments[1], -30.0, 20.0)};
}

torch::Tensor SdxlVaeImpl::encodeToLatents(const torch::Tensor& images, bool sample,
                                           const c10::optional<at::Generator>& generator) {
  const LatentDistribution d = encode(images);
  return (sample ? d.sample(generator) : d.mean) * config_.scalingFactor;
}

torch::Tensor SdxlVaeImpl::decodeLatents(const torch::Tensor& latents) {
  if (latents.dim() != 4 || latents.size(1) != config_.embedDim)
    throw std::invalid_argument("SDXL VAE: latents must be [batch, " + std::to_string(config_.embedDim) +
                                ", h, w], got " + c10::str(latents.sizes()));
  return decoder(post_quant_conv(latents / config_.scalingFactor));
}

SdxlVaeConfig SdxlVaeImpl::inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  return SdxlVaeConfig::inferFromCheckpoint(file, prefix);
}

void SdxlVaeImpl::loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  loadModuleFromCheckpoint(*this, file, prefix, "SDXL VAE");
}

std::vector<std::pair<std::string, torch::Tensor>> SdxlVaeImpl::checkpointTensors(const std::string& prefix) const {
  return moduleCheckpointTensors(*this, prefix);
}

}  // namespace sinter::models

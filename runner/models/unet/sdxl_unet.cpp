#include "models/unet/sdxl_unet.h"

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include "io/safetensors.h"
#include "kernels/stream_capture.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/layers/gradient_checkpoint.h"
#include "models/layers/group_norm32.h"
#include "models/unet/sdxl_unet_blocks.h"
#include "models/unet/timestep_embedding.h"

namespace sinter::models {

namespace {

// SINTER_UNET_CHANNELS_LAST=0 keeps the fused-kernel switch from turning channels_last on (for measuring).
bool channelsLastAllowedByEnvironment() {
  const char* env = std::getenv("SINTER_UNET_CHANNELS_LAST");
  return !(env && std::string(env) == "0");
}

// Whether every convolution kernel of the U-Net (its own 4-D parameters; LoRA's conv adapters are not
// registered here) can change layout: one that is a view of a flat buffer (train/base/compute_copies.h,
// full-weight training) must keep its place, and a float8-stored kernel (fp8_base) is upcast per call.
bool convKernelsCanFollow(torch::nn::Module& module) {
  for (const torch::Tensor& p : module.parameters()) {
    if (p.dim() != 4) continue;
    const bool float8 = p.element_size() == 1;  // no float8 type in an older libtorch
    const bool ownsStorage = p.storage_offset() == 0 && p.storage().nbytes() == static_cast<size_t>(p.numel()) * p.element_size();
    if (float8 || !ownsStorage) return false;
  }
  return true;
}

// The convolutions' kernels in `format`, so that cuDNN convolves activations of that layout without
// converting a kernel each call.
void convertConvKernels(torch::nn::Module& module, torch::MemoryFormat format) {
  torch::NoGradGuard noGrad;
  for (torch::Tensor& p : module.parameters())
    if (p.dim() == 4 && !p.is_contiguous(format)) p.set_data(p.data().contiguous(format));
}

}  // namespace

SdxlUnetBlockImpl::SdxlUnetBlockImpl(const std::vector<SdxlUnetLayer>& layers, const SdxlUnetConfig& c) {
  using Kind = SdxlUnetLayer::Kind;
  for (size_t m = 0; m < layers.size(); ++m) {
    const SdxlUnetLayer& l = layers[m];
    const std::string name = std::to_string(m);
    switch (l.kind) {
      case Kind::ConvIn: {
        auto conv = register_module(
            name, torch::nn::Conv2d(torch::nn::Conv2dOptions(l.inChannels, l.outChannels, 3).padding(1)));
        layers_.push_back([conv](const torch::Tensor& x, const torch::Tensor&, const torch::Tensor&) mutable {
          return conv->forward(x);
        });
        break;
      }
      case Kind::ResBlock: {
        auto res = register_module(name, ResBlock(l.inChannels, l.outChannels, c.timeEmbedDim(), c.normGroups));
        layers_.push_back([res](const torch::Tensor& x, const torch::Tensor& emb, const torch::Tensor&) mutable {
          return res->forward(x, emb);
        });
        break;
      }
      case Kind::SpatialTransformer: {
        auto st = register_module(name, SpatialTransformer(l.inChannels, l.heads, l.depth, c.contextDim, c.normGroups,
                                                           c.linearProjection));
        layers_.push_back([st](const torch::Tensor& x, const torch::Tensor&, const torch::Tensor& ctx) mutable {
          return st->forward(x, ctx);
        });
        break;
      }
      case Kind::Downsample: {
        auto down = register_module(name, Downsample(l.inChannels));
        layers_.push_back([down](const torch::Tensor& x, const torch::Tensor&, const torch::Tensor&) mutable {
          return down->forward(x);
        });
        break;
      }
      case Kind::Upsample: {
        auto up = register_module(name, Upsample(l.inChannels));
        layers_.push_back([up](const torch::Tensor& x, const torch::Tensor&, const torch::Tensor&) mutable {
          return up->forward(x);
        });
        break;
      }
    }
  }
}

torch::Tensor SdxlUnetBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& emb, const torch::Tensor& context) {
  torch::Tensor h = x;
  for (auto& layer : layers_) h = layer(h, emb, context);
  return h;
}

SdxlUnetImpl::SdxlUnetImpl(const SdxlUnetConfig& config) : config_(config) {
  const SdxlUnetPlan plan = sdxlUnetPlan(config);  // validates the config
  const int64_t embDim = config.timeEmbedDim();
  // Randomly initialised layers are made one statement each, the later first: arguments of one call
  // are evaluated in an unspecified order, and this is the order GCC gave the random checkpoints the
  // goldens were made from (tests/data/golden), whatever the compiler.
  Linear timeOut(embDim, embDim);
  Linear timeIn(config.modelChannels, embDim);
  time_embed = register_module("time_embed", torch::nn::Sequential(timeIn, torch::nn::SiLU(), timeOut));
  // label_emb.0 is a Sequential inside a list (libtorch cannot nest Sequentials directly). SD 1.x
  // and 2.x have none.
  if (config.admInChannels > 0) {
    label_emb = register_module("label_emb", torch::nn::ModuleList());
    Linear labelOut(embDim, embDim);
    Linear labelIn(config.admInChannels, embDim);
    labelEmbed_ = torch::nn::Sequential(labelIn, torch::nn::SiLU(), labelOut);
    label_emb->push_back(labelEmbed_);
  }
  input_blocks = register_module("input_blocks", torch::nn::ModuleList());
  for (const auto& layers : plan.inputBlocks) {
    regions_.push_back("input_blocks." + std::to_string(inputs_.size()));
    inputs_.push_back(SdxlUnetBlock(layers, config));
    input_blocks->push_back(inputs_.back());
  }
  middle_block = register_module("middle_block", SdxlUnetBlock(plan.middleBlock, config));
  regions_.push_back("middle_block");
  output_blocks = register_module("output_blocks", torch::nn::ModuleList());
  for (const auto& layers : plan.outputBlocks) {
    regions_.push_back("output_blocks." + std::to_string(outputs_.size()));
    outputs_.push_back(SdxlUnetBlock(layers, config));
    output_blocks->push_back(outputs_.back());
  }
  const int64_t last = config.modelChannels * config.channelMult.front();
  out = register_module("out", torch::nn::Sequential(
                                   GroupNorm32(config.normGroups, last), torch::nn::SiLU(),
                                   torch::nn::Conv2d(torch::nn::Conv2dOptions(last, config.outChannels, 3).padding(1))));
}

void SdxlUnetImpl::setFusedKernels(bool enabled) {
  std::vector<std::shared_ptr<CrossAttentionImpl>> onContext;
  for (const auto& module : modules(/*include_self=*/false)) {
    if (auto geglu = std::dynamic_pointer_cast<GegluImpl>(module)) geglu->fused = enabled;
    if (auto res = std::dynamic_pointer_cast<ResBlockImpl>(module)) res->fused = enabled;
    if (auto st = std::dynamic_pointer_cast<SpatialTransformerImpl>(module)) st->fused = enabled;
    if (auto attention = std::dynamic_pointer_cast<CrossAttentionImpl>(module)) attention->setJointQkv(enabled);
    if (auto block = std::dynamic_pointer_cast<BasicTransformerBlockImpl>(module)) onContext.push_back(block->attn2.ptr());
  }
  fusedOut_ = enabled;
  channelsLastOnCuda_ = enabled && channelsLastAllowedByEnvironment();
  contextKv_.set(std::move(onContext), enabled);
}

void SdxlUnetImpl::setChannelsLast(bool enabled) { channelsLast_ = enabled; }

torch::Tensor SdxlUnetImpl::runBlock(size_t region, SdxlUnetBlock& block, const torch::Tensor& h, const torch::Tensor& emb,
                                     const torch::Tensor& context) {
  if (blockRunner_) return blockRunner_(regions_[region], block, h, emb, context);
  return runBlockDefault(block, h, emb, context);
}

bool SdxlUnetImpl::checkpointsBlocks() const {
  return gradientCheckpointing_ && is_training() && torch::GradMode::is_enabled();
}

torch::Tensor SdxlUnetImpl::runBlockDefault(SdxlUnetBlock& block, const torch::Tensor& h, const torch::Tensor& emb,
                                            const torch::Tensor& context) {
  if (checkpointsBlocks()) {
    SdxlUnetBlock b = block;
    // A reentrant checkpoint's output needs grad only when an input does; with only LoRA
    // parameters trainable, the first block's input does not, so make it (as sd-scripts does
    // with enable_input_require_grads).
    const bool anyInputNeedsGrad = h.requires_grad() || emb.requires_grad() || context.requires_grad();
    torch::Tensor hIn = anyInputNeedsGrad ? h : h.detach().requires_grad_(true);
    return runCheckpointed([b](const std::vector<torch::Tensor>& in) mutable { return b(in[0], in[1], in[2]); },
                           {hIn, emb, context}, preserveRngState_, checkpointOffload_);
  }
  return block(h, emb, context);
}

torch::Tensor SdxlUnetImpl::forward(const torch::Tensor& x, const torch::Tensor& timesteps, const torch::Tensor& context,
                                    const torch::Tensor& y) {
  const int64_t factor = int64_t(1) << (config_.channelMult.size() - 1);
  if (x.dim() != 4 || x.size(1) != config_.inChannels || x.size(2) % factor || x.size(3) % factor)
    throw std::invalid_argument("UNet: x must be [batch, " + std::to_string(config_.inChannels) +
                                ", h, w] with h and w multiples of " + std::to_string(factor) + ", got " +
                                c10::str(x.sizes()));
  if (context.dim() != 3 || context.size(2) != config_.contextDim)
    throw std::invalid_argument("UNet: context must be [batch, tokens, " + std::to_string(config_.contextDim) +
                                "], got " + c10::str(context.sizes()));
  if (config_.admInChannels > 0 ? (!y.defined() || y.dim() != 2 || y.size(1) != config_.admInChannels) : y.defined())
    throw std::invalid_argument("UNet: y must be " +
                                (config_.admInChannels > 0 ? "[batch, " + std::to_string(config_.admInChannels) + "]"
                                                           : std::string("undefined (the UNet has no label embedding)")) +
                                ", got " + (y.defined() ? c10::str(y.sizes()) : std::string("undefined")));

  const torch::Tensor tEmb = timestepEmbedding(timesteps, config_.modelChannels).to(x.scalar_type());
  torch::Tensor emb = time_embed->forward(tEmb);
  if (labelEmbed_) emb = emb + labelEmbed_->forward(y.to(x.scalar_type()));
  const torch::Tensor ctx = context.to(x.scalar_type());
  // Every attn2's k and v at once, before the blocks; not where the blocks run one by one in graphs
  // of their own or checkpointed (k and v would be inputs those do not know): there each projects its own.
  std::optional<ProvidedContextKv> contextKv;
  if (!blockRunner_ && !checkpointsBlocks()) contextKv.emplace(contextKv_, ctx);

  std::vector<torch::Tensor> skips;
  // Channels_last, converted once here: every block keeps it (the skips' concatenations too). The
  // kernels follow the activations (here, where the device is known), not while a CUDA graph captures
  // (a conversion would be recorded, not done). Only where every kernel can: one left NCHW would be
  // converted by cuDNN at each call, which at SDXL's 32x32 level (a 1280x1280x3x3 kernel is 11x the
  // activation) costs more than the activations' conversions saved; such runs stay NCHW.
  const bool wanted = runsChannelsLast(x.device());
  if (convKernelsDecidedFor_ != wanted && !kernels::capturingOnCurrentStream(x.device())) {
    convKernelsDecidedFor_ = wanted;
    const bool follow = wanted && convKernelsCanFollow(*this);
    convKernelsLayout_ = follow ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous;
    convertConvKernels(*this, convKernelsLayout_);
  }
  const bool channelsLast = wanted && convKernelsLayout_ == torch::MemoryFormat::ChannelsLast;
  torch::Tensor h = channelsLast ? x.contiguous(torch::MemoryFormat::ChannelsLast) : x;
  size_t region = 0;
  for (SdxlUnetBlock& block : inputs_) {
    h = runBlock(region++, block, h, emb, ctx);
    skips.push_back(h);
  }
  h = runBlock(region++, middle_block, h, emb, ctx);
  for (SdxlUnetBlock& block : outputs_) {
    h = torch::cat({h, skips.back()}, 1);
    skips.pop_back();
    h = runBlock(region++, block, h, emb, ctx);
  }
  return normSiluThen(out, h, fusedOut_).contiguous();  // NCHW, as the loss and the loop expect
}

SdxlUnetConfig SdxlUnetImpl::inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  return SdxlUnetConfig::inferFromCheckpoint(file, prefix);
}

void SdxlUnetImpl::loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  loadModuleFromCheckpoint(*this, file, prefix, config_.admInChannels > 0 ? "SDXL UNet" : "UNet");
}

std::vector<std::pair<std::string, torch::Tensor>> SdxlUnetImpl::checkpointTensors(const std::string& prefix) const {
  return moduleCheckpointTensors(*this, prefix);
}

}  // namespace sinter::models

#include "models/autoencoders/flux_autoencoder.h"

#include <stdexcept>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"

namespace sinter::models {

SdxlVaeConfig FluxAutoencoderConfig::blockLayout() const {
  SdxlVaeConfig c;
  c.inChannels = inChannels;
  c.channels = channels;
  c.channelMult = channelMult;
  c.numResBlocks = numResBlocks;
  c.zChannels = zChannels;
  c.embedDim = zChannels;
  c.normGroups = normGroups;
  return c;
}

FluxAutoencoderConfig FluxAutoencoderConfig::full() { return FluxAutoencoderConfig{}; }

FluxAutoencoderConfig FluxAutoencoderConfig::tiny() {
  FluxAutoencoderConfig c;
  c.channels = 32;
  c.channelMult = {1, 2};
  c.numResBlocks = 1;
  return c;
}

void FluxAutoencoderConfig::validate() const {
  if (scaleFactor == 0.0) throw std::invalid_argument("FLUX autoencoder config: scale_factor is 0");
  try {
    blockLayout().validate();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("FLUX autoencoder config: ") + e.what());
  }
}

bool FluxAutoencoderConfig::operator==(const FluxAutoencoderConfig& o) const {
  return inChannels == o.inChannels && channels == o.channels && channelMult == o.channelMult &&
         numResBlocks == o.numResBlocks && zChannels == o.zChannels && normGroups == o.normGroups &&
         scaleFactor == o.scaleFactor && shiftFactor == o.shiftFactor;
}

FluxAutoencoderConfig FluxAutoencoderConfig::inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  const std::string model = "FLUX autoencoder";
  FluxAutoencoderConfig c;
  const auto convIn = requireShape(file, prefix, "encoder.conv_in.weight", model);
  c.channels = convIn[0];
  c.inChannels = convIn[1];
  c.zChannels = requireShape(file, prefix, "encoder.conv_out.weight", model)[0] / 2;
  if (file.has(prefix + "quant_conv.weight"))
    throw CheckpointError(file.path() + ": has " + prefix +
                          "quant_conv.weight, which FLUX's autoencoder lacks: this looks like an SD/SDXL VAE");
  c.channelMult.clear();
  for (int64_t i = 0;; ++i) {
    const std::string key = prefix + "encoder.down." + std::to_string(i) + ".block.0.conv2.weight";
    if (!file.has(key)) break;
    c.channelMult.push_back(file.info(key).shape[0] / c.channels);
  }
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

FluxAutoencoderImpl::FluxAutoencoderImpl(const FluxAutoencoderConfig& config) : config_(config) {
  config.validate();
  encoder = register_module("encoder", VaeEncoder(config.blockLayout()));
  decoder = register_module("decoder", VaeDecoder(config.blockLayout()));
}

LatentDistribution FluxAutoencoderImpl::encode(const torch::Tensor& images) {
  const int64_t f = config_.downscale();
  if (images.dim() != 4 || images.size(1) != config_.inChannels || images.size(2) % f || images.size(3) % f)
    throw std::invalid_argument("FLUX autoencoder: images must be [batch, " + std::to_string(config_.inChannels) +
                                ", h, w] with h and w multiples of " + std::to_string(f) + ", got " +
                                c10::str(images.sizes()));
  const auto moments = encoder(images).chunk(2, 1);
  return {moments[0], moments[1]};
}

torch::Tensor FluxAutoencoderImpl::encodeToLatents(const torch::Tensor& images, bool sample,
                                                   const c10::optional<at::Generator>& generator) {
  const LatentDistribution d = encode(images);
  return ((sample ? d.sample(generator) : d.mean) - config_.shiftFactor) * config_.scaleFactor;
}

torch::Tensor FluxAutoencoderImpl::decodeLatents(const torch::Tensor& latents) {
  if (latents.dim() != 4 || latents.size(1) != config_.zChannels)
    throw std::invalid_argument("FLUX autoencoder: latents must be [batch, " + std::to_string(config_.zChannels) +
                                ", h, w], got " + c10::str(latents.sizes()));
  return decoder(latents / config_.scaleFactor + config_.shiftFactor);
}

void FluxAutoencoderImpl::loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  loadModuleFromCheckpoint(*this, file, prefix, "FLUX autoencoder");
}

std::vector<std::pair<std::string, torch::Tensor>> FluxAutoencoderImpl::checkpointTensors(const std::string& prefix) const {
  return moduleCheckpointTensors(*this, prefix);
}

}  // namespace sinter::models

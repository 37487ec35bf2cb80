#include "models/checkpoints/sdxl_checkpoint.h"

#include <functional>
#include <stdexcept>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/layers/parameters_from_checkpoint.h"
#include "models/unet/sdxl_size_conditioning.h"

namespace sinter::models {

SdxlCheckpointConfig SdxlCheckpointConfig::full() {
  return {SdxlUnetConfig::full(), SdxlVaeConfig::full(), ClipTextConfig::sdxlClipL(), ClipTextConfig::sdxlOpenClipBigG()};
}

SdxlCheckpointConfig SdxlCheckpointConfig::tiny() {
  SdxlCheckpointConfig c{SdxlUnetConfig::tiny(), SdxlVaeConfig::tiny(), ClipTextConfig::tinyClipL(),
                         ClipTextConfig::tinyOpenClipBigG()};
  c.unet.contextDim = c.clipL.width + c.bigG.width;
  c.unet.admInChannels = c.bigG.projectionDim + kSdxlSizeConditioningDim;
  return c;
}

void SdxlCheckpointConfig::validate() const {
  unet.validate();
  vae.validate();
  clipL.validate();
  bigG.validate();
  if (unet.contextDim != clipL.width + bigG.width)
    throw std::invalid_argument("SDXL checkpoint: the UNet's context width " + std::to_string(unet.contextDim) +
                                " is not CLIP-L's " + std::to_string(clipL.width) + " + bigG's " +
                                std::to_string(bigG.width));
  if (unet.admInChannels != bigG.projectionDim + kSdxlSizeConditioningDim)
    throw std::invalid_argument("SDXL checkpoint: the UNet's adm width " + std::to_string(unet.admInChannels) +
                                " is not bigG's pooled " + std::to_string(bigG.projectionDim) + " + " +
                                std::to_string(kSdxlSizeConditioningDim) + " size conditioning");
  if (unet.inChannels != vae.embedDim || unet.outChannels != vae.embedDim)
    throw std::invalid_argument("SDXL checkpoint: the UNet's " + std::to_string(unet.inChannels) +
                                " latent channels do not match the VAE's " + std::to_string(vae.embedDim));
}

namespace {

void rejectOtherFamilies(const io::SafetensorsFile& file) {
  if (file.has(std::string(SdxlUnetImpl::kPrefix) + "input_blocks.0.0.weight")) return;
  const std::string family = describeCheckpointFamily(file);
  throw CheckpointError(file.path() + ": not an SDXL checkpoint (no " + SdxlUnetImpl::kPrefix +
                        "input_blocks.0.0.weight)" + (family.empty() ? "" : "; " + family));
}

}  // namespace

SdxlCheckpointConfig SdxlCheckpointConfig::inferFromCheckpoint(const io::SafetensorsFile& file) {
  rejectOtherFamilies(file);
  SdxlCheckpointConfig c;
  collectCheckpointErrors({
      [&] { c.unet = SdxlUnetImpl::inferFromCheckpoint(file, SdxlUnetImpl::kPrefix); },
      [&] { c.vae = SdxlVaeImpl::inferFromCheckpoint(file, SdxlVaeImpl::kPrefix); },
      [&] { c.clipL = ClipTextModelImpl::inferFromCheckpoint(file, ClipTextModelImpl::kSdxlPrefix); },
      [&] { c.bigG = OpenClipTextModelImpl::inferFromCheckpoint(file, OpenClipTextModelImpl::kSdxlPrefix); },
  });
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(file.path() + ": " + e.what());
  }
  return c;
}

SdxlUnet buildRandomSdxlUnet(const SdxlCheckpointConfig& config, uint64_t seed) {
  torch::manual_seed(seed + 0);
  return SdxlUnet(config.unet);
}

SdxlVae buildRandomSdxlVae(const SdxlCheckpointConfig& config, uint64_t seed) {
  torch::manual_seed(seed + 1);
  return SdxlVae(config.vae);
}

ClipTextModel buildRandomSdxlClipL(const SdxlCheckpointConfig& config, uint64_t seed) {
  torch::manual_seed(seed + 2);
  return ClipTextModel(config.clipL);
}

OpenClipTextModel buildRandomSdxlBigG(const SdxlCheckpointConfig& config, uint64_t seed) {
  torch::manual_seed(seed + 3);
  return OpenClipTextModel(config.bigG);
}

SdxlCheckpoint loadSdxlCheckpoint(const io::SafetensorsFile& file) {
  SdxlCheckpoint ckpt;
  ckpt.config = SdxlCheckpointConfig::inferFromCheckpoint(file);
  {
    // Weights are overwritten from the file: no need to spend time on random initialisation.
    const ParametersFromCheckpoint fromFile;
    ckpt.unet = SdxlUnet(ckpt.config.unet);
    ckpt.vae = SdxlVae(ckpt.config.vae);
    ckpt.clipL = ClipTextModel(ckpt.config.clipL);
    ckpt.bigG = OpenClipTextModel(ckpt.config.bigG);
  }
  collectCheckpointErrors({
      [&] { ckpt.unet->loadFromCheckpoint(file, SdxlUnetImpl::kPrefix); },
      [&] { ckpt.vae->loadFromCheckpoint(file, SdxlVaeImpl::kPrefix); },
      [&] { ckpt.clipL->loadFromCheckpoint(file, ClipTextModelImpl::kSdxlPrefix); },
      [&] { ckpt.bigG->loadFromCheckpoint(file, OpenClipTextModelImpl::kSdxlPrefix); },
  });
  return ckpt;
}

SdxlCheckpoint loadSdxlCheckpoint(const std::string& path) {
  const io::SafetensorsFile file(path);
  return loadSdxlCheckpoint(file);
}

}  // namespace sinter::models

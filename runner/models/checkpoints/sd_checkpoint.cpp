#include "models/checkpoints/sd_checkpoint.h"

#include <functional>
#include <stdexcept>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/layers/parameters_from_checkpoint.h"
#include "models/checkpoints/random_parts_writer.h"

namespace sinter::models {

namespace {

constexpr const char* kSd1ClipPrefix = "cond_stage_model.transformer.";
constexpr const char* kSd2OpenClipPrefix = "cond_stage_model.model.";

ClipTextConfig openClipH() {
  ClipTextConfig c = ClipTextConfig::sdxlOpenClipBigG();
  c.width = 1024;
  c.layers = 24;
  c.heads = ClipTextConfig::headsForWidth(1024);
  c.mlpWidth = 4096;
  c.projectionDim = 1024;
  return c;
}

SdVersion versionOf(const io::SafetensorsFile& file) {
  const std::string unetKey = std::string(SdxlUnetImpl::kPrefix) + "input_blocks.0.0.weight";
  if (!file.has(unetKey) || file.has(std::string(SdxlUnetImpl::kPrefix) + "label_emb.0.0.weight")) {
    const std::string family = describeCheckpointFamily(file);
    const bool sdxl = file.has(unetKey);
    throw CheckpointError(file.path() + ": not an SD 1.x/2.x checkpoint (" +
                          (sdxl ? "its UNet has SDXL's label_emb; set model_family = \"sdxl\"" : "no " + unetKey) + ")" +
                          (family.empty() || sdxl ? "" : "; " + family));
  }
  for (const std::string& key : file.keys())
    if (key.rfind(kSd2OpenClipPrefix, 0) == 0) return SdVersion::V2;
  return SdVersion::V1;
}

// SD 1.x files written with transformers before 4.x keep CLIP's modules directly under
// cond_stage_model.transformer. (no text_model. level): said so instead of a list of missing keys.
void rejectPreTextModelLayout(const io::SafetensorsFile& file) {
  const std::string old = std::string(kSd1ClipPrefix) + "embeddings.token_embedding.weight";
  if (file.has(old))
    throw CheckpointError(file.path() + ": its CLIP text encoder is in the layout of transformers before 4.x (" + old +
                          ", no text_model. level); save the checkpoint again with a current tool (A1111, ComfyUI or "
                          "sd-scripts' convert_diffusers20_original_sd.py) and train that file");
}

}  // namespace

const char* sdTextEncoderPrefix(SdVersion version) { return version == SdVersion::V1 ? kSd1ClipPrefix : kSd2OpenClipPrefix; }

SdCheckpointConfig SdCheckpointConfig::full(SdVersion version) {
  SdCheckpointConfig c;
  c.version = version;
  c.unet = version == SdVersion::V1 ? SdxlUnetConfig::sd15() : SdxlUnetConfig::sd2();
  c.vae = SdxlVaeConfig::full();
  c.vae.scalingFactor = kSdVaeScalingFactor;
  c.text = version == SdVersion::V1 ? ClipTextConfig::sdxlClipL() : openClipH();
  return c;
}

SdCheckpointConfig SdCheckpointConfig::tiny(SdVersion version) {
  SdCheckpointConfig c;
  c.version = version;
  c.unet = version == SdVersion::V1 ? SdxlUnetConfig::tinySd15() : SdxlUnetConfig::tinySd2();
  c.vae = SdxlVaeConfig::tiny();
  c.vae.scalingFactor = kSdVaeScalingFactor;
  c.text = version == SdVersion::V1 ? ClipTextConfig::tinyClipL() : ClipTextConfig::tinyOpenClipBigG();
  c.unet.contextDim = c.text.width;
  return c;
}

void SdCheckpointConfig::validate() const {
  unet.validate();
  vae.validate();
  text.validate();
  if (unet.contextDim != text.width)
    throw std::invalid_argument("SD checkpoint: the UNet's context width " + std::to_string(unet.contextDim) +
                                " is not the text encoder's width " + std::to_string(text.width));
  if (unet.admInChannels != 0) throw std::invalid_argument("SD checkpoint: an SD 1.x/2.x UNet has no label embedding");
  if (unet.inChannels != vae.embedDim || unet.outChannels != vae.embedDim)
    throw std::invalid_argument("SD checkpoint: the UNet's " + std::to_string(unet.inChannels) +
                                " latent channels do not match the VAE's " + std::to_string(vae.embedDim));
}

SdCheckpointConfig SdCheckpointConfig::inferFromCheckpoint(const io::SafetensorsFile& file) {
  SdCheckpointConfig c;
  c.version = versionOf(file);
  collectCheckpointErrors({
      [&] { c.unet = SdxlUnetImpl::inferFromCheckpoint(file, SdxlUnetImpl::kPrefix); },
      [&] {
        c.vae = SdxlVaeImpl::inferFromCheckpoint(file, SdxlVaeImpl::kPrefix);
        c.vae.scalingFactor = kSdVaeScalingFactor;
      },
      [&] {
        if (c.version == SdVersion::V2) c.text = OpenClipTextModelImpl::inferFromCheckpoint(file, kSd2OpenClipPrefix);
        else {
          rejectPreTextModelLayout(file);
          c.text = ClipTextModelImpl::inferFromCheckpoint(file, kSd1ClipPrefix);
        }
      },
  });
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(file.path() + ": " + e.what());
  }
  return c;
}

std::vector<std::pair<std::string, torch::Tensor>> SdCheckpoint::checkpointTensors() const {
  std::vector<std::pair<std::string, torch::Tensor>> out = unet->checkpointTensors(SdxlUnetImpl::kPrefix);
  for (auto part : {vae->checkpointTensors(SdxlVaeImpl::kPrefix),
                    clip ? clip->checkpointTensors(kSd1ClipPrefix) : openClip->checkpointTensors(kSd2OpenClipPrefix)})
    out.insert(out.end(), part.begin(), part.end());
  return out;
}

SdCheckpoint buildRandomSdCheckpoint(const SdCheckpointConfig& config, uint64_t seed) {
  config.validate();
  SdCheckpoint ckpt;
  ckpt.config = config;
  torch::manual_seed(seed + 0);
  ckpt.unet = SdxlUnet(config.unet);
  torch::manual_seed(seed + 1);
  ckpt.vae = SdxlVae(config.vae);
  torch::manual_seed(seed + 2);
  if (config.version == SdVersion::V1) ckpt.clip = ClipTextModel(config.text);
  else ckpt.openClip = OpenClipTextModel(config.text);
  return ckpt;
}

SdCheckpoint loadSdCheckpoint(const io::SafetensorsFile& file) {
  SdCheckpoint ckpt;
  ckpt.config = SdCheckpointConfig::inferFromCheckpoint(file);
  {
    const ParametersFromCheckpoint fromFile;  // the file's values overwrite them
    ckpt.unet = SdxlUnet(ckpt.config.unet);
    ckpt.vae = SdxlVae(ckpt.config.vae);
    if (ckpt.config.version == SdVersion::V1) ckpt.clip = ClipTextModel(ckpt.config.text);
    else ckpt.openClip = OpenClipTextModel(ckpt.config.text);
  }
  collectCheckpointErrors({
      [&] { ckpt.unet->loadFromCheckpoint(file, SdxlUnetImpl::kPrefix); },
      [&] { ckpt.vae->loadFromCheckpoint(file, SdxlVaeImpl::kPrefix); },
      [&] {
        if (ckpt.openClip) ckpt.openClip->loadFromCheckpoint(file, kSd2OpenClipPrefix);
        else ckpt.clip->loadFromCheckpoint(file, kSd1ClipPrefix);
      },
  });
  return ckpt;
}

SdCheckpoint loadSdCheckpoint(const std::string& path) {
  const io::SafetensorsFile file(path);
  return loadSdCheckpoint(file);
}

void writeRandomSdCheckpoint(const std::string& path, SdVersion version, bool tiny, uint64_t seed) {
  const SdCheckpointConfig config = tiny ? SdCheckpointConfig::tiny(version) : SdCheckpointConfig::full(version);
  config.validate();
  // Part 0 the text encoder (its keys sort first and it is the smallest to keep), 1 the VAE, 2 the UNet.
  const auto buildPart = [&](int64_t part) -> NamedWeights {
    if (part == 0) {
      torch::manual_seed(seed + 2);
      if (version == SdVersion::V1) return ClipTextModel(config.text)->checkpointTensors(kSd1ClipPrefix);
      return OpenClipTextModel(config.text)->checkpointTensors(kSd2OpenClipPrefix);
    }
    if (part == 1) {
      torch::manual_seed(seed + 1);
      return SdxlVae(config.vae)->checkpointTensors(SdxlVaeImpl::kPrefix);
    }
    torch::manual_seed(seed + 0);
    return SdxlUnet(config.unet)->checkpointTensors(SdxlUnetImpl::kPrefix);
  };
  const std::string architecture = version == SdVersion::V1 ? "stable-diffusion-v1" : "stable-diffusion-v2-512";
  writeRandomParts(path, 3, buildPart, tiny ? torch::kFloat32 : torch::kFloat16,
                   {{"modelspec.architecture", architecture},
                    {"modelspec.title", std::string("Sinter random ") + (version == SdVersion::V1 ? "SD 1.5" : "SD 2.1") + " checkpoint"},
                    {"sinter.random_seed", std::to_string(seed)}});
}

}  // namespace sinter::models

#pragma once
// An SDXL single-file checkpoint in the original layout: UNet (model.diffusion_model.), VAE
// (first_stage_model.), CLIP-L (conditioner.embedders.0.transformer.) and OpenCLIP bigG
// (conditioner.embedders.1.model.), sized from the file's tensor shapes.
#include <torch/torch.h>

#include <string>

#include "models/text_encoders/clip_text_model.h"
#include "models/text_encoders/open_clip_text_model.h"
#include "models/unet/sdxl_unet.h"
#include "models/autoencoders/sdxl_vae.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

struct SdxlCheckpointConfig {
  SdxlUnetConfig unet;
  SdxlVaeConfig vae;
  ClipTextConfig clipL;
  ClipTextConfig bigG;

  static SdxlCheckpointConfig full();
  static SdxlCheckpointConfig tiny();
  // Throws CheckpointError naming the file and, for another family's file, what it looks like.
  static SdxlCheckpointConfig inferFromCheckpoint(const io::SafetensorsFile& file);
  // The UNet's context and adm sizes must match what the text encoders produce.
  void validate() const;  // throws std::invalid_argument
};

struct SdxlCheckpoint {
  SdxlCheckpointConfig config;
  SdxlUnet unet{nullptr};
  SdxlVae vae{nullptr};
  ClipTextModel clipL{nullptr};
  OpenClipTextModel bigG{nullptr};
};

// Every model built at `config`'s sizes with freshly initialised (random) weights: model i of
// (UNet, VAE, CLIP-L, bigG) is built right after torch::manual_seed(seed + i), so the same seed
// gives the same weights.
SdxlUnet buildRandomSdxlUnet(const SdxlCheckpointConfig& config, uint64_t seed);
SdxlVae buildRandomSdxlVae(const SdxlCheckpointConfig& config, uint64_t seed);
ClipTextModel buildRandomSdxlClipL(const SdxlCheckpointConfig& config, uint64_t seed);
OpenClipTextModel buildRandomSdxlBigG(const SdxlCheckpointConfig& config, uint64_t seed);

// Loads all four models (float32, on the CPU). Every expected key must be there with its shape;
// a CheckpointError lists what is missing or wrong for each model, or says which family the file
// looks like (e.g. FLUX). io::SafetensorsError for a file that is not valid safetensors.
SdxlCheckpoint loadSdxlCheckpoint(const std::string& path);
SdxlCheckpoint loadSdxlCheckpoint(const io::SafetensorsFile& file);

}  // namespace sinter::models

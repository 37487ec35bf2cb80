#pragma once
// An SD 1.x or 2.x single-file checkpoint in the original (LDM) layout, as A1111 and sd-scripts
// read and write it: UNet (model.diffusion_model.), VAE (first_stage_model.) and one text encoder:
//  - SD 1.x: CLIP ViT-L/14 in the Hugging Face layout under cond_stage_model.transformer.
//    (older files without the text_model. level are read too);
//  - SD 2.x: OpenCLIP ViT-H/14 in OpenCLIP's layout under cond_stage_model.model.
// Sized from the file's tensor shapes. The VAE's latents are scaled by SD's 0.18215.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/text_encoders/clip_text_model.h"
#include "models/text_encoders/open_clip_text_model.h"
#include "models/unet/sdxl_unet.h"
#include "models/autoencoders/sdxl_vae.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

enum class SdVersion { V1, V2 };

constexpr double kSdVaeScalingFactor = 0.18215;

struct SdCheckpointConfig {
  SdVersion version = SdVersion::V1;
  SdxlUnetConfig unet;
  SdxlVaeConfig vae;
  ClipTextConfig text;  // CLIP ViT-L (V1) or OpenCLIP ViT-H (V2)

  static SdCheckpointConfig full(SdVersion version);
  static SdCheckpointConfig tiny(SdVersion version);
  // Throws CheckpointError naming the file and, for another family's file, what it looks like.
  static SdCheckpointConfig inferFromCheckpoint(const io::SafetensorsFile& file);
  void validate() const;  // the UNet's context width must be the text encoder's; throws std::invalid_argument
};

struct SdCheckpoint {
  SdCheckpointConfig config;
  SdxlUnet unet{nullptr};
  SdxlVae vae{nullptr};
  ClipTextModel clip{nullptr};          // V1
  OpenClipTextModel openClip{nullptr};  // V2

  torch::nn::Module& textEncoder() { return clip ? static_cast<torch::nn::Module&>(*clip) : *openClip; }
  ClipTextTransformer& textTransformer() { return clip ? clip->textModel() : openClip->textModel(); }
  // Every weight under its single-file key, ready to be written (DreamBooth / fine-tune saves).
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors() const;
};

// Where each model lies in the single file.
const char* sdTextEncoderPrefix(SdVersion version);  // cond_stage_model.transformer. / cond_stage_model.model.

// Models with freshly initialised (random) weights: model i of (UNet, VAE, text encoder) right
// after torch::manual_seed(seed + i).
SdCheckpoint buildRandomSdCheckpoint(const SdCheckpointConfig& config, uint64_t seed);

// Loads all three models (float32, on the CPU). Every expected key must be there with its shape;
// a CheckpointError lists what is missing or wrong for each, or says which family the file looks like.
SdCheckpoint loadSdCheckpoint(const std::string& path);
SdCheckpoint loadSdCheckpoint(const io::SafetensorsFile& file);

// tiny: float32 at SdCheckpointConfig::tiny(); full: float16 at full() (about 2 GB for SD 1.5,
// like the released pruned files). Written atomically, one model in memory at a time.
void writeRandomSdCheckpoint(const std::string& path, SdVersion version, bool tiny, uint64_t seed);

}  // namespace sinter::models

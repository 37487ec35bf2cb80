#pragma once
// The five models an SD 3.x run uses (sd-scripts' sd3_train_network.py): the MMDiT and its VAE from
// the checkpoint (or the VAE from --vae), CLIP-L and CLIP-G from the checkpoint's text_encoders.* or
// from --clip_l / --clip_g, and T5-XXL from --t5xxl; loaded on the CPU in float32.
#include <torch/torch.h>

#include <optional>
#include <string>

#include "models/autoencoders/flux_autoencoder.h"
#include "models/sd3/sd3_mmdit.h"
#include "models/text_encoders/clip_text_model.h"
#include "models/text_encoders/t5_encoder.h"

namespace sinter::train {

struct Sd3ModelFiles {
  std::string checkpoint;  // pretrained_model_name_or_path
  std::string vae, clipL, clipG, t5xxl;  // empty: the checkpoint's own (T5-XXL: required)
};

struct Sd3ModelSet {
  models::Sd3Mmdit mmdit{nullptr};
  models::FluxAutoencoder vae{nullptr};  // SD 3's 16-channel VAE: FLUX's architecture, SD 3's scale and shift
  models::ClipTextModel clipL{nullptr}, clipG{nullptr};  // CLIPTextModelWithProjection each
  models::T5Encoder t5{nullptr};
  std::string t5File;  // where T5-XXL was read: the checkpoint (when it holds one) or the t5xxl file
  bool t5StoredInFloat8 = false;  // that file holds T5-XXL's weights as float8 e4m3 (t5xxl_fp8_e4m3fn)

  // The VAE's latents of [-1, 1] images, (mean or sample - 0.0609) * 1.5305, without gradients.
  torch::Tensor encodeLatents(const torch::Tensor& images, const at::Generator& generator);
};

// models::CheckpointError names the file and what it lacks (a text encoder neither in the checkpoint
// nor given, widths that do not fit the MMDiT); io::SafetensorsError a file that is no safetensors.
Sd3ModelSet loadSd3ModelSet(const Sd3ModelFiles& files);

// A CLIP of SD 3 (CLIPTextModelWithProjection, "text_model.*" and "text_projection.weight"), from a
// file holding it alone ("" or ComfyUI's "clip_l."/"clip_g." + "transformer.") or an SD 3 checkpoint
// (text_encoders.clip_l/clip_g.transformer.). A file without text_projection gets the identity, as
// sd-scripts' load_clip_l adds it. `bigG`: CLIP-G (gelu).
models::ClipTextModel loadSd3Clip(const io::SafetensorsFile& file, bool bigG);
// Its shape as loadSd3Clip makes it, from the header alone (the preflight's check); the prefix its
// keys are under in `file`.
struct Sd3ClipShape {
  models::ClipTextConfig config;
  std::string prefix;
  bool projectionStored = false;  // else the identity stands in
};
Sd3ClipShape sd3ClipShape(const io::SafetensorsFile& file, bool bigG);

}  // namespace sinter::train

#include "train/sdxl/sdxl_memory_model.h"

#include <algorithm>
#include <cmath>

#include "core/ascii_text.h"
#include "io/safetensors.h"
#include "train/base/checkpoint_sizes.h"

namespace sinter::train {

namespace {

// The SDXL U-Net's weights fp8_base stores in float8 (sdxl_model_set.h): its Linear weights and
// its blocks' Conv2d kernels, the ".weight" tensors of two or more dimensions (norms' weights have
// one), less the stem and head convolutions (4 latent channels in and out), which stay.
int64_t sdxlUnetFloat8Params(const io::SafetensorsFile& file) {
  const std::string prefix = "model.diffusion_model.";
  int64_t n = 0;
  for (const std::string& key : file.keys()) {
    if (key.rfind(prefix, 0) != 0 || key.size() < 7 || key.compare(key.size() - 7, 7, ".weight") != 0) continue;
    if (key == prefix + "input_blocks.0.0.weight" || key == prefix + "out.2.weight") continue;
    const io::TensorInfo& info = file.info(key);
    if (info.shape.size() >= 2) n += info.numel();
  }
  return n;
}

// The SDXL text encoders' weights fp8_base stores in float8 (sdxl_model_set.h): the Linear weights
// of CLIP-L's layers and bigG's resblocks (their two-dimensional tensors; not the embeddings or
// bigG's text_projection, which stay).
int64_t sdxlTextEncoderFloat8Params(const io::SafetensorsFile& file) {
  int64_t n = 0;
  for (const std::string& key : file.keys()) {
    if (!startsWith(key, "conditioner.")) continue;
    if (key.find(".layers.") == std::string::npos && key.find(".resblocks.") == std::string::npos) continue;
    if (const io::TensorInfo& info = file.info(key); info.shape.size() == 2) n += info.numel();
  }
  return n;
}

// Textual inversion's new rows per token: the widths of CLIP-L's and bigG's token tables, summed.
int64_t sdxlTokenRowWidths(const io::SafetensorsFile& file) {
  int64_t width = 0;
  for (const std::string& key : file.keys())
    if (startsWith(key, "conditioner.") && endsWith(key, "token_embedding.weight"))
      if (const io::TensorInfo& info = file.info(key); info.shape.size() == 2) width += info.shape[1];
  return width;
}

}  // namespace

void sizeSdxlMemoryModel(const Config& config, MemoryModel& m) {
  const std::string model = config.getString("pretrained_model_name_or_path");
  if (!readable(model)) return;
  const io::SafetensorsFile file(model);
  if (const int64_t unet = numelUnder(file, "model.diffusion_model."); unet > 0) {
    // Another size than SDXL base's (a tiny test model): activation costs scaled by the width
    // (the square root of the parameter ratio).
    const BlockKind& full = m.blocks.at(0);
    const double scale = std::min(1.0, std::sqrt(static_cast<double>(unet) / static_cast<double>(full.linearParams + full.otherParams)));
    m.fullBytesPerToken *= scale;
    m.savedBytesPerToken *= scale;
    m.recomputeBytesPerToken *= scale;
    m.fixedBytes *= scale;
    const int64_t stored = sdxlUnetFloat8Params(file);
    m.blocks = {BlockKind{"U-Net", 1, stored, unet - stored}};
  }
  if (const int64_t te = numelUnder(file, "conditioner."); te > 0) {
    m.encoderParams = te;
    m.encoderFp8LinearParams = sdxlTextEncoderFloat8Params(file);
    m.embeddingWidth = sdxlTokenRowWidths(file);
  }
  if (const int64_t vae = numelUnder(file, "first_stage_model."); vae > 0) m.autoencoderParams = vae;
  m.autoencoderEncodeScale = autoencoderEncodeScale(file, "first_stage_model.");
}

}  // namespace sinter::train

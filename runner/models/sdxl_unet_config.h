#pragma once
// The sizes of an SDXL UNet. full() is SDXL 1.0; tiny() has the same structure (three levels,
// transformers only below the first, the same key names) at a size a CPU test runs in moments.
#include <cstdint>
#include <string>
#include <vector>

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

struct SdxlUnetConfig {
  int64_t inChannels = 4;
  int64_t outChannels = 4;
  int64_t modelChannels = 320;
  std::vector<int64_t> channelMult = {1, 2, 4};
  int64_t numResBlocks = 2;
  std::vector<int64_t> transformerDepth = {0, 2, 10};  // per level
  int64_t transformerDepthMiddle = 10;
  int64_t numHeadChannels = 64;  // SDXL's fixed head width; not visible in a checkpoint's shapes
  int64_t contextDim = 2048;     // CLIP-L 768 + bigG 1280 hidden states
  int64_t admInChannels = 2816;  // bigG pooled 1280 + size conditioning 1536
  int64_t normGroups = 32;

  int64_t timeEmbedDim() const { return modelChannels * 4; }

  static SdxlUnetConfig full();
  static SdxlUnetConfig tiny();
  // Sizes read from tensor shapes under prefix (e.g. "model.diffusion_model."). Throws
  // CheckpointError (models/checkpoint_tensors.h) when the layout is not an SDXL UNet's.
  static SdxlUnetConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix);

  void validate() const;  // throws std::invalid_argument naming the inconsistent size
  bool operator==(const SdxlUnetConfig& o) const;
};

}  // namespace sinter::models

#pragma once
// The sizes of a latent-diffusion UNet (the SAI layout: input_blocks, middle_block, output_blocks).
// One class serves SDXL and SD 1.x/2.x, which differ only in these sizes and switches:
//  - full() is SDXL 1.0 (three levels, heads 64 wide, linear projections, a label embedding);
//  - sd15() is SD 1.x (four levels, 8 heads, 1x1-conv projections, 768-wide context, no label embedding);
//  - sd2() is SD 2.x (four levels, heads 64 wide, linear projections, 1024-wide context, no label embedding).
// The tiny*() configs have the same structure and key names at a size a CPU test runs in moments.
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
  // Heads are not visible in a checkpoint's shapes: either a fixed head width (SDXL, SD 2.x: 64),
  // or, where numHeadChannels is 0, a fixed head count (SD 1.x: 8).
  int64_t numHeadChannels = 64;
  int64_t numHeads = 0;
  int64_t contextDim = 2048;     // CLIP-L 768 + bigG 1280 hidden states
  int64_t admInChannels = 2816;  // bigG pooled 1280 + size conditioning 1536; 0: no label_emb (SD 1.x/2.x)
  int64_t normGroups = 32;
  // The SpatialTransformers' proj_in/proj_out: Linear (SDXL, SD 2.x) or 1x1 Conv2d (SD 1.x).
  bool linearProjection = true;

  int64_t timeEmbedDim() const { return modelChannels * 4; }
  int64_t headsFor(int64_t channels) const { return numHeadChannels > 0 ? channels / numHeadChannels : numHeads; }

  static SdxlUnetConfig full();
  static SdxlUnetConfig tiny();
  static SdxlUnetConfig sd15();
  static SdxlUnetConfig sd2();
  static SdxlUnetConfig tinySd15();
  static SdxlUnetConfig tinySd2();
  // Sizes read from tensor shapes under prefix (e.g. "model.diffusion_model."). Throws
  // CheckpointError (models/checkpoints/checkpoint_tensors.h) when the layout is not such a UNet's. The heads
  // follow the projections: 1x1-conv projections are SD 1.x's 8 heads, linear ones heads 64 wide.
  static SdxlUnetConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix);

  void validate() const;  // throws std::invalid_argument naming the inconsistent size
  bool operator==(const SdxlUnetConfig& o) const;
};

}  // namespace sinter::models

#pragma once
// The sizes of a FLUX.1 transformer (BFL's FluxParams). dev() and schnell() are the released
// models (they differ only in the guidance embedding); tiny() has the same structure and key
// names at a size a CPU test runs in moments.
#include <cstdint>
#include <string>
#include <vector>

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

enum class FluxVariant { Dev, Schnell, Chroma };
const char* fluxVariantName(FluxVariant variant);  // "dev" / "schnell" / "chroma"

struct FluxConfig {
  int64_t inChannels = 64;      // packed latent tokens: 16 channels x 2x2 patch
  int64_t vecInDim = 768;       // CLIP-L pooled output
  int64_t contextInDim = 4096;  // T5-XXL hidden states
  int64_t hiddenSize = 3072;
  double mlpRatio = 4.0;
  int64_t numHeads = 24;
  int64_t depth = 19;              // double_blocks
  int64_t depthSingleBlocks = 38;  // single_blocks
  std::vector<int64_t> axesDim = {16, 56, 56};  // RoPE dims per position-id axis; sums to the head width
  double theta = 10000.0;
  bool qkvBias = true;
  bool guidanceEmbed = true;  // dev: guidance_in.*; schnell: none; Chroma: the guidance goes to the approximator
  // Chroma (sd-scripts' chroma_models.Chroma): no time_in / vector_in / guidance_in and no per-block
  // modulation Linears; distilled_guidance_layer (the Approximator) makes every block's shift, scale
  // and gate from the timestep, the guidance and each vector's index. 0: FLUX.1's per-block modulation.
  int64_t approximatorInDim = 0;  // Chroma: 64 (16 timestep + 16 guidance + 32 index channels)
  int64_t approximatorHiddenSize = 5120;
  int64_t approximatorDepth = 5;

  int64_t headDim() const { return hiddenSize / numHeads; }
  int64_t mlpHiddenDim() const { return static_cast<int64_t>(static_cast<double>(hiddenSize) * mlpRatio); }
  bool chroma() const { return approximatorInDim > 0; }
  // Chroma's modulation vectors: 3 per single block, 6 + 6 per double block (img, txt), 2 for the last layer.
  int64_t chromaModulationCount() const { return 3 * depthSingleBlocks + 12 * depth + 2; }
  FluxVariant variant() const {
    return chroma() ? FluxVariant::Chroma : guidanceEmbed ? FluxVariant::Dev : FluxVariant::Schnell;
  }

  static FluxConfig dev();
  static FluxConfig schnell();
  // Chroma1-HD / Chroma1-Base (chroma_models.chroma_params): FLUX.1's blocks, approximator 64 -> 5120 x 5.
  static FluxConfig chromaFull();
  // hidden 64, 2 heads of 32 (axes 8, 12, 12), 2 double and 2 single blocks, small in/context/vec.
  static FluxConfig tiny(bool guidanceEmbed = true);
  // tiny()'s blocks with a Chroma approximator of 16 inputs, 32 wide, 2 deep.
  static FluxConfig tinyChroma();
  // Sizes from tensor shapes under prefix ("" or "model.diffusion_model."): widths from img_in,
  // txt_in, vector_in and the QK norm; block counts from the highest block index; dev/schnell
  // from guidance_in; Chroma from distilled_guidance_layer (its sizes from its shapes). The head count and RoPE axes are not visible in shapes: BFL's 24 heads and
  // (16, 56, 56) when the head width is 128, else hidden/headDim heads with axes split as
  // (d - 2*(3d/8), 3d/8, 3d/8) rounded to even. Throws CheckpointError (checkpoint_tensors.h).
  static FluxConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix);

  void validate() const;  // throws std::invalid_argument naming the inconsistent size
  bool operator==(const FluxConfig& o) const;
};

}  // namespace sinter::models

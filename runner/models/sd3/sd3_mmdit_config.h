#pragma once
// The shape of SD 3 / 3.5's MMDiT (sd-scripts' sd3_models.SD3Params): joint blocks 64 channels
// wide per block (depth 24: 1536 wide, 24 heads of 64), a 2x2 patch over 16 latent channels, a
// stored sin-cos position table of posEmbedMaxSize² patches that each image crops.
#include <cstdint>
#include <set>
#include <string>

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

struct Sd3MmditConfig {
  int64_t depth = 24;  // joint blocks; hidden = 64 · depth, heads = depth (the "magic" of MMDiT.__init__)
  int64_t patchSize = 2;
  int64_t inChannels = 16;
  int64_t posEmbedMaxSize = 192;
  int64_t admInChannels = 2048;      // y: CLIP-L's and CLIP-G's pooled outputs
  int64_t contextInFeatures = 4096;  // T5-XXL's width; CLIP-L/G's 768 + 1280 are zero-padded to it
  bool qkNormRms = false;            // SD 3.5: ln_q / ln_k, RMSNorm with a weight
  std::set<int64_t> xBlockSelfAttnLayers;  // SD 3.5 Medium (MMDiT-X): the x blocks with a second self-attention

  int64_t hiddenSize() const { return 64 * depth; }
  int64_t numHeads() const { return depth; }
  int64_t mlpHiddenSize() const { return 4 * hiddenSize(); }
  int64_t outChannels() const { return inChannels; }
  // sd-scripts' model_type (after "stable-diffusion-3-"): "medium", "5-medium" or "5-large".
  std::string modelType() const;

  static Sd3MmditConfig sd3Medium();
  static Sd3MmditConfig sd35Medium();
  static Sd3MmditConfig sd35Large();
  // Every part of SD 3.5 Medium, small: depth 2 (128 wide, 2 heads), a 32x32 position table, qk norm,
  // block 0's x block with the second attention, context 32 (the tiny T5's) and pooled 32 channels in.
  static Sd3MmditConfig tiny();
  // sd3_utils.analyze_state_dict_state: the shape read from the keys under `prefix`
  // ("model.diffusion_model." in a single file); a CheckpointError names what is missing.
  static Sd3MmditConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix);

  bool operator==(const Sd3MmditConfig& o) const;
};

}  // namespace sinter::models

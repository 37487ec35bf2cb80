#include "models/sd3/sd3_mmdit_config.h"

#include <cmath>
#include <string>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"

namespace sinter::models {

std::string Sd3MmditConfig::modelType() const {
  if (!qkNormRms) return "medium";
  return xBlockSelfAttnLayers.empty() ? "5-large" : "5-medium";
}

Sd3MmditConfig Sd3MmditConfig::sd3Medium() { return {}; }

Sd3MmditConfig Sd3MmditConfig::sd35Medium() {
  Sd3MmditConfig c;
  c.posEmbedMaxSize = 384;
  c.qkNormRms = true;
  for (int64_t i = 0; i <= 12; ++i) c.xBlockSelfAttnLayers.insert(i);
  return c;
}

Sd3MmditConfig Sd3MmditConfig::sd35Large() {
  Sd3MmditConfig c;
  c.depth = 38;
  c.qkNormRms = true;
  return c;
}

Sd3MmditConfig Sd3MmditConfig::tiny() {
  Sd3MmditConfig c;
  c.depth = 2;
  c.posEmbedMaxSize = 32;  // 128 px with the tiny VAE's 2x
  c.admInChannels = 32;  // the tiny SD 3 CLIPs' pooled outputs, 16 + 16
  c.contextInFeatures = 32;
  c.qkNormRms = true;
  c.xBlockSelfAttnLayers = {0};
  return c;
}

Sd3MmditConfig Sd3MmditConfig::inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  const std::string model = "SD 3 MMDiT";
  Sd3MmditConfig c;
  const auto proj = requireShape(file, prefix, "x_embedder.proj.weight", model);
  c.patchSize = proj[2];
  c.inChannels = proj[1];
  c.depth = proj[0] / 64;
  if (proj[0] % 64 || c.depth < 1)
    throw CheckpointError(file.path() + ": " + prefix + "x_embedder.proj.weight is " + std::to_string(proj[0]) +
                          " channels wide, not a multiple of 64 (the MMDiT's 64 per block)");
  const int64_t numPatches = requireShape(file, prefix, "pos_embed", model)[1];
  c.posEmbedMaxSize = std::llround(std::sqrt(static_cast<double>(numPatches)));
  if (c.posEmbedMaxSize * c.posEmbedMaxSize != numPatches)
    throw CheckpointError(file.path() + ": " + prefix + "pos_embed holds " + std::to_string(numPatches) +
                          " positions, not a square grid");
  c.admInChannels = requireShape(file, prefix, "y_embedder.mlp.0.weight", model)[1];
  c.contextInFeatures = requireShape(file, prefix, "context_embedder.weight", model)[1];
  c.qkNormRms = file.has(prefix + "joint_blocks.0.context_block.attn.ln_k.weight");
  // analyze_state_dict_state: the x blocks with a second attention are those with x_block.attn2.ln_k.
  c.xBlockSelfAttnLayers = indexedBlocks(file, prefix, "joint_blocks", ".x_block.attn2.ln_k.weight");
  const int64_t blocksInFile = countIndexedBlocks(file, prefix, "joint_blocks", ".x_block.attn.qkv.weight");
  if (blocksInFile != c.depth)
    throw CheckpointError(file.path() + ": " + std::to_string(blocksInFile) + " joint blocks where x_embedder's width (" +
                          std::to_string(proj[0]) + ") says " + std::to_string(c.depth));
  return c;
}

bool Sd3MmditConfig::operator==(const Sd3MmditConfig& o) const {
  return depth == o.depth && patchSize == o.patchSize && inChannels == o.inChannels && posEmbedMaxSize == o.posEmbedMaxSize &&
         admInChannels == o.admInChannels && contextInFeatures == o.contextInFeatures && qkNormRms == o.qkNormRms &&
         xBlockSelfAttnLayers == o.xBlockSelfAttnLayers;
}

}  // namespace sinter::models

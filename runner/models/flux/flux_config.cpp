#include "models/flux/flux_config.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"

namespace sinter::models {

const char* fluxVariantName(FluxVariant variant) {
  switch (variant) {
    case FluxVariant::Dev: return "dev";
    case FluxVariant::Schnell: return "schnell";
    case FluxVariant::Chroma: return "chroma";
  }
  return "dev";
}

FluxConfig FluxConfig::dev() { return FluxConfig{}; }

FluxConfig FluxConfig::schnell() {
  FluxConfig c;
  c.guidanceEmbed = false;
  return c;
}

FluxConfig FluxConfig::chromaFull() {
  FluxConfig c;
  c.approximatorInDim = 64;
  return c;
}

FluxConfig FluxConfig::tinyChroma() {
  FluxConfig c = tiny(true);
  c.approximatorInDim = 16;
  c.approximatorHiddenSize = 32;
  c.approximatorDepth = 2;
  return c;
}

FluxConfig FluxConfig::tiny(bool guidanceEmbed) {
  FluxConfig c;
  c.inChannels = 64;  // kept: the 2x2 packing of 16 latent channels
  c.vecInDim = 32;      // ClipTextConfig::tinyClipL's width
  c.contextInDim = 32;  // T5EncoderConfig::tiny's d_model
  c.hiddenSize = 64;
  c.numHeads = 2;
  c.depth = 2;
  c.depthSingleBlocks = 2;
  c.axesDim = {8, 12, 12};
  c.guidanceEmbed = guidanceEmbed;
  return c;
}

void FluxConfig::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("FLUX transformer config: " + what); };
  if (inChannels <= 0 || vecInDim <= 0 || contextInDim <= 0 || hiddenSize <= 0 || numHeads <= 0 || depth < 0 ||
      depthSingleBlocks < 0 || mlpRatio <= 0 || theta <= 0)
    fail("sizes must be positive");
  if (hiddenSize % numHeads)
    fail("hidden size " + std::to_string(hiddenSize) + " is not a multiple of " + std::to_string(numHeads) + " heads");
  if (chroma() && (approximatorInDim % 4 || approximatorHiddenSize <= 0 || approximatorDepth < 0))
    fail("Chroma's approximator needs inputs a multiple of 4 (timestep, guidance and index embeddings) and a positive width");
  if (axesDim.empty()) fail("axes_dim is empty");
  for (int64_t d : axesDim)
    if (d <= 0 || d % 2) fail("every RoPE axis needs an even, positive width, got " + std::to_string(d));
  const int64_t axesSum = std::accumulate(axesDim.begin(), axesDim.end(), int64_t(0));
  if (axesSum != headDim())
    fail("axes_dim sums to " + std::to_string(axesSum) + ", not the head width " + std::to_string(headDim()));
}

bool FluxConfig::operator==(const FluxConfig& o) const {
  // Chroma has no vector_in: its vecInDim is no part of the model.
  return inChannels == o.inChannels && (chroma() || vecInDim == o.vecInDim) && contextInDim == o.contextInDim &&
         hiddenSize == o.hiddenSize && mlpRatio == o.mlpRatio && numHeads == o.numHeads && depth == o.depth &&
         depthSingleBlocks == o.depthSingleBlocks && axesDim == o.axesDim && theta == o.theta && qkvBias == o.qkvBias &&
         guidanceEmbed == o.guidanceEmbed && approximatorInDim == o.approximatorInDim &&
         (!chroma() || (approximatorHiddenSize == o.approximatorHiddenSize && approximatorDepth == o.approximatorDepth));
}

FluxConfig FluxConfig::inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  const std::string model = "FLUX transformer";
  FluxConfig c;
  const auto imgIn = requireShape(file, prefix, "img_in.weight", model);
  c.hiddenSize = imgIn[0];
  c.inChannels = imgIn[1];
  c.contextInDim = requireShape(file, prefix, "txt_in.weight", model)[1];
  if (file.has(prefix + "distilled_guidance_layer.in_proj.weight")) {  // Chroma: no vector_in, no guidance_in
    const auto inProj = requireShape(file, prefix, "distilled_guidance_layer.in_proj.weight", model);
    c.approximatorInDim = inProj[1];
    c.approximatorHiddenSize = inProj[0];
    c.approximatorDepth = countIndexedBlocks(file, prefix, "distilled_guidance_layer.layers", ".in_layer.weight");
  } else {
    c.vecInDim = requireShape(file, prefix, "vector_in.in_layer.weight", model)[1];
    c.guidanceEmbed = file.has(prefix + "guidance_in.in_layer.weight");
  }
  c.depth = countIndexedBlocks(file, prefix, "double_blocks", ".img_attn.proj.bias");
  c.depthSingleBlocks = countIndexedBlocks(file, prefix, "single_blocks", ".linear2.bias");
  int64_t headDim = 0;
  if (c.depth > 0) {
    headDim = requireShape(file, prefix, "double_blocks.0.img_attn.norm.query_norm.scale", model)[0];
    c.mlpRatio = static_cast<double>(requireShape(file, prefix, "double_blocks.0.img_mlp.0.weight", model)[0]) /
                 static_cast<double>(c.hiddenSize);
    c.qkvBias = file.has(prefix + "double_blocks.0.img_attn.qkv.bias");
  } else if (c.depthSingleBlocks > 0) {
    headDim = requireShape(file, prefix, "single_blocks.0.norm.query_norm.scale", model)[0];
    const int64_t linear1 = requireShape(file, prefix, "single_blocks.0.linear1.weight", model)[0];
    c.mlpRatio = static_cast<double>(linear1 - 3 * c.hiddenSize) / static_cast<double>(c.hiddenSize);
  } else {
    throw CheckpointError(file.path() + ": not a FLUX transformer: no " + prefix + "double_blocks.N.* or " + prefix +
                          "single_blocks.N.* keys");
  }
  if (headDim <= 0 || c.hiddenSize % headDim)
    throw CheckpointError(file.path() + ": FLUX transformer: QK norm width " + std::to_string(headDim) +
                          " does not divide the hidden size " + std::to_string(c.hiddenSize));
  c.numHeads = c.hiddenSize / headDim;
  if (headDim == 128) {
    c.axesDim = {16, 56, 56};
  } else {
    const int64_t spatial = (3 * headDim / 8) / 2 * 2;
    c.axesDim = {headDim - 2 * spatial, spatial, spatial};
  }
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(file.path() + ": " + e.what());
  }
  return c;
}

}  // namespace sinter::models

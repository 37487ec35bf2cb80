#include "models/unet/sdxl_unet_config.h"

#include <stdexcept>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"

namespace sinter::models {

SdxlUnetConfig SdxlUnetConfig::full() { return SdxlUnetConfig{}; }

SdxlUnetConfig SdxlUnetConfig::tiny() {
  SdxlUnetConfig c;
  c.modelChannels = 32;
  c.channelMult = {1, 2, 4};
  c.numResBlocks = 1;
  c.transformerDepth = {0, 1, 1};
  c.transformerDepthMiddle = 1;
  c.numHeadChannels = 64;  // the same head width as full size: 1 head at 64 channels, 2 at 128
  c.contextDim = 64;
  c.admInChannels = 32 + 1536;
  return c;
}

SdxlUnetConfig SdxlUnetConfig::sd15() {
  SdxlUnetConfig c;
  c.channelMult = {1, 2, 4, 4};
  c.transformerDepth = {1, 1, 1, 0};
  c.transformerDepthMiddle = 1;
  c.numHeadChannels = 0;
  c.numHeads = 8;
  c.contextDim = 768;
  c.admInChannels = 0;
  c.linearProjection = false;
  return c;
}

SdxlUnetConfig SdxlUnetConfig::sd2() {
  SdxlUnetConfig c = sd15();
  c.numHeadChannels = 64;
  c.numHeads = 0;
  c.contextDim = 1024;
  c.linearProjection = true;
  return c;
}

SdxlUnetConfig SdxlUnetConfig::tinySd15() {
  SdxlUnetConfig c = sd15();
  c.modelChannels = 32;
  c.channelMult = {1, 2, 2, 2};
  c.numResBlocks = 1;
  c.contextDim = 32;  // the tiny CLIP-L's width
  return c;
}

SdxlUnetConfig SdxlUnetConfig::tinySd2() {
  SdxlUnetConfig c = tinySd15();
  c.modelChannels = 64;  // one head of SD 2.x's width 64 at the first level
  c.channelMult = {1, 1, 2, 2};
  c.numHeadChannels = 64;
  c.numHeads = 0;
  c.linearProjection = true;
  return c;
}

void SdxlUnetConfig::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("SDXL UNet config: " + what); };
  if (channelMult.empty()) fail("channel_mult is empty");
  if (transformerDepth.size() != channelMult.size())
    fail("transformer_depth has " + std::to_string(transformerDepth.size()) + " levels, channel_mult has " +
         std::to_string(channelMult.size()));
  if (modelChannels <= 0 || numResBlocks <= 0 || inChannels <= 0 || outChannels <= 0 || contextDim <= 0 ||
      admInChannels < 0 || numHeadChannels < 0 || numHeads < 0 || (numHeadChannels == 0) == (numHeads == 0))
    fail("sizes must be positive, and exactly one of the head width and the head count given");
  const int64_t headDivisor = numHeadChannels > 0 ? numHeadChannels : numHeads;
  for (size_t level = 0; level < channelMult.size(); ++level) {
    const int64_t ch = modelChannels * channelMult[level];
    if (ch % normGroups) fail("channels " + std::to_string(ch) + " are not a multiple of " + std::to_string(normGroups) + " groups");
    if (transformerDepth[level] > 0 && ch % headDivisor)
      fail("channels " + std::to_string(ch) + " at level " + std::to_string(level) + " do not divide into " +
           std::to_string(headDivisor) + (numHeadChannels > 0 ? " channels per head" : " heads"));
  }
  if (transformerDepthMiddle > 0 && (modelChannels * channelMult.back()) % headDivisor)
    fail("middle block channels do not divide into the heads");
}

bool SdxlUnetConfig::operator==(const SdxlUnetConfig& o) const {
  return inChannels == o.inChannels && outChannels == o.outChannels && modelChannels == o.modelChannels &&
         channelMult == o.channelMult && numResBlocks == o.numResBlocks && transformerDepth == o.transformerDepth &&
         transformerDepthMiddle == o.transformerDepthMiddle && numHeadChannels == o.numHeadChannels &&
         numHeads == o.numHeads && contextDim == o.contextDim && admInChannels == o.admInChannels && normGroups == o.normGroups &&
         linearProjection == o.linearProjection;
}

namespace {

int64_t countTransformerBlocks(const io::SafetensorsFile& file, const std::string& blockPrefix) {
  int64_t depth = 0;
  while (file.has(blockPrefix + "transformer_blocks." + std::to_string(depth) + ".attn1.to_q.weight")) ++depth;
  return depth;
}

}  // namespace

SdxlUnetConfig SdxlUnetConfig::inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  const std::string model = "UNet";
  SdxlUnetConfig c;
  const auto convIn = requireShape(file, prefix, "input_blocks.0.0.weight", model);
  if (convIn.size() != 4) throw CheckpointError(file.path() + ": " + prefix + "input_blocks.0.0.weight is not a conv weight");
  c.modelChannels = convIn[0];
  c.inChannels = convIn[1];
  c.outChannels = requireShape(file, prefix, "out.2.weight", model)[0];
  // SD 1.x/2.x have no label embedding (no size conditioning).
  c.admInChannels = file.has(prefix + "label_emb.0.0.weight") ? file.info(prefix + "label_emb.0.0.weight").shape[1] : 0;

  // Walk input_blocks: ResBlocks (with an optional transformer at .1) until a Downsample ends a level.
  c.channelMult.clear();
  c.transformerDepth.clear();
  int64_t resInLevel = 0, firstLevelRes = -1, levelChannels = 0, levelDepth = 0;
  for (int64_t n = 1;; ++n) {
    const std::string block = prefix + "input_blocks." + std::to_string(n) + ".";
    const bool isDown = file.has(block + "0.op.weight");
    const bool isRes = file.has(block + "0.in_layers.2.weight");
    if (isRes) {
      levelChannels = file.info(block + "0.in_layers.2.weight").shape[0];
      levelDepth = std::max(levelDepth, countTransformerBlocks(file, block + "1."));
      ++resInLevel;
      if (file.has(block + "1.transformer_blocks.0.attn2.to_k.weight"))
        c.contextDim = file.info(block + "1.transformer_blocks.0.attn2.to_k.weight").shape[1];
    }
    if (isDown || !isRes) {
      if (resInLevel == 0) break;
      if (levelChannels % c.modelChannels)
        throw CheckpointError(file.path() + ": UNet level channels " + std::to_string(levelChannels) +
                              " are not a multiple of model channels " + std::to_string(c.modelChannels));
      c.channelMult.push_back(levelChannels / c.modelChannels);
      c.transformerDepth.push_back(levelDepth);
      if (firstLevelRes < 0) firstLevelRes = resInLevel;
      resInLevel = 0;
      levelDepth = 0;
      if (!isDown) break;
    }
  }
  if (c.channelMult.empty())
    throw CheckpointError(file.path() + ": no UNet ResBlocks found under " + prefix + "input_blocks.*");
  c.numResBlocks = firstLevelRes;
  c.transformerDepthMiddle = countTransformerBlocks(file, prefix + "middle_block.1.");
  // The first transformer's proj_in tells the projections apart, and with them the heads.
  for (const std::string& key : file.keys()) {
    if (key.rfind(prefix, 0) != 0 || key.size() < 15 || key.compare(key.size() - 15, 15, ".proj_in.weight") != 0) continue;
    c.linearProjection = file.info(key).shape.size() == 2;
    break;
  }
  c.numHeadChannels = c.linearProjection ? 64 : 0;
  c.numHeads = c.linearProjection ? 0 : 8;
  if (file.has(prefix + "middle_block.1.transformer_blocks.0.attn2.to_k.weight"))
    c.contextDim = file.info(prefix + "middle_block.1.transformer_blocks.0.attn2.to_k.weight").shape[1];
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(file.path() + ": " + e.what());
  }
  return c;
}

}  // namespace sinter::models

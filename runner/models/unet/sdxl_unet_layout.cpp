#include "models/unet/sdxl_unet_layout.h"

namespace sinter::models {

namespace {

using Kind = SdxlUnetLayer::Kind;

SdxlUnetLayer transformer(const SdxlUnetConfig& c, int64_t channels, int64_t depth) {
  return {Kind::SpatialTransformer, channels, channels, depth, c.headsFor(channels)};
}

}  // namespace

SdxlUnetPlan sdxlUnetPlan(const SdxlUnetConfig& c) {
  c.validate();
  SdxlUnetPlan plan;
  plan.inputBlocks.push_back({{Kind::ConvIn, c.inChannels, c.modelChannels}});
  std::vector<int64_t> skipChannels = {c.modelChannels};
  int64_t ch = c.modelChannels;
  const size_t levels = c.channelMult.size();
  for (size_t level = 0; level < levels; ++level) {
    const int64_t out = c.modelChannels * c.channelMult[level];
    for (int64_t r = 0; r < c.numResBlocks; ++r) {
      std::vector<SdxlUnetLayer> block = {{Kind::ResBlock, ch, out}};
      ch = out;
      if (c.transformerDepth[level] > 0) block.push_back(transformer(c, ch, c.transformerDepth[level]));
      plan.inputBlocks.push_back(block);
      skipChannels.push_back(ch);
    }
    if (level + 1 != levels) {
      plan.inputBlocks.push_back({{Kind::Downsample, ch, ch}});
      skipChannels.push_back(ch);
    }
  }
  plan.middleBlock.push_back({Kind::ResBlock, ch, ch});
  if (c.transformerDepthMiddle > 0) plan.middleBlock.push_back(transformer(c, ch, c.transformerDepthMiddle));
  plan.middleBlock.push_back({Kind::ResBlock, ch, ch});

  for (size_t l = levels; l-- > 0;) {
    const int64_t out = c.modelChannels * c.channelMult[l];
    for (int64_t r = 0; r <= c.numResBlocks; ++r) {
      const int64_t skip = skipChannels.back();
      skipChannels.pop_back();
      std::vector<SdxlUnetLayer> block = {{Kind::ResBlock, ch + skip, out}};
      ch = out;
      if (c.transformerDepth[l] > 0) block.push_back(transformer(c, ch, c.transformerDepth[l]));
      if (l > 0 && r == c.numResBlocks) block.push_back({Kind::Upsample, ch, ch});
      plan.outputBlocks.push_back(block);
    }
  }
  return plan;
}

namespace {

void appendTransformerLinears(std::vector<LinearInfo>& out, const std::string& path, const SdxlUnetLayer& layer,
                              int64_t contextDim) {
  const int64_t ch = layer.inChannels;  // inner dim = heads * head channels = ch
  out.push_back({path + "proj_in", ch, ch, true});
  for (int64_t k = 0; k < layer.depth; ++k) {
    const std::string b = path + "transformer_blocks." + std::to_string(k) + ".";
    for (const char* attn : {"attn1", "attn2"}) {
      const int64_t kvIn = std::string(attn) == "attn1" ? ch : contextDim;
      out.push_back({b + attn + ".to_q", ch, ch, false});
      out.push_back({b + attn + ".to_k", kvIn, ch, false});
      out.push_back({b + attn + ".to_v", kvIn, ch, false});
      out.push_back({b + attn + ".to_out.0", ch, ch, true});
    }
    out.push_back({b + "ff.net.0.proj", ch, ch * 4 * 2, true});  // GEGLU: value and gate
    out.push_back({b + "ff.net.2", ch * 4, ch, true});
  }
  out.push_back({path + "proj_out", ch, ch, true});
}

std::vector<LinearInfo> linearLayers(const SdxlUnetConfig& c, bool withEmbeddings) {
  const SdxlUnetPlan plan = sdxlUnetPlan(c);
  std::vector<LinearInfo> out;
  const int64_t embDim = c.timeEmbedDim();
  if (withEmbeddings) {
    out.push_back({"time_embed.0", c.modelChannels, embDim, true});
    out.push_back({"time_embed.2", embDim, embDim, true});
    if (c.admInChannels > 0) {
      out.push_back({"label_emb.0.0", c.admInChannels, embDim, true});
      out.push_back({"label_emb.0.2", embDim, embDim, true});
    }
  }
  auto visit = [&](const std::string& path, const SdxlUnetLayer& layer) {
    if (layer.kind == SdxlUnetLayer::Kind::SpatialTransformer) appendTransformerLinears(out, path, layer, c.contextDim);
    if (layer.kind == SdxlUnetLayer::Kind::ResBlock && withEmbeddings)
      out.push_back({path + "emb_layers.1", embDim, layer.outChannels, true});
  };
  for (size_t n = 0; n < plan.inputBlocks.size(); ++n)
    for (size_t m = 0; m < plan.inputBlocks[n].size(); ++m)
      visit("input_blocks." + std::to_string(n) + "." + std::to_string(m) + ".", plan.inputBlocks[n][m]);
  for (size_t m = 0; m < plan.middleBlock.size(); ++m) visit("middle_block." + std::to_string(m) + ".", plan.middleBlock[m]);
  for (size_t n = 0; n < plan.outputBlocks.size(); ++n)
    for (size_t m = 0; m < plan.outputBlocks[n].size(); ++m)
      visit("output_blocks." + std::to_string(n) + "." + std::to_string(m) + ".", plan.outputBlocks[n][m]);
  return out;
}

}  // namespace

std::vector<LinearInfo> sdxlUnetTransformerLinearLayers(const SdxlUnetConfig& config) {
  return linearLayers(config, false);
}

std::vector<LinearInfo> sdxlUnetLinearLayers(const SdxlUnetConfig& config) { return linearLayers(config, true); }

}  // namespace sinter::models

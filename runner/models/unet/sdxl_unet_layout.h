#pragma once
// The SDXL UNet's block structure computed from its config alone (no weights allocated): which
// layer sits at input_blocks.N.M / middle_block.M / output_blocks.N.M with which channel counts.
// The UNet is built from this plan, and the LoRA network lists its target Linears from it.
#include <cstdint>
#include <string>
#include <vector>

#include "models/unet/sdxl_unet_config.h"

namespace sinter::models {

struct SdxlUnetLayer {
  enum class Kind { ConvIn, ResBlock, SpatialTransformer, Downsample, Upsample };
  Kind kind;
  int64_t inChannels = 0;
  int64_t outChannels = 0;
  int64_t depth = 0;  // transformer blocks (SpatialTransformer only)
  int64_t heads = 0;  // attention heads (SpatialTransformer only)
};

struct SdxlUnetPlan {
  std::vector<std::vector<SdxlUnetLayer>> inputBlocks;   // input_blocks.N.M
  std::vector<SdxlUnetLayer> middleBlock;                // middle_block.M
  std::vector<std::vector<SdxlUnetLayer>> outputBlocks;  // output_blocks.N.M
};

SdxlUnetPlan sdxlUnetPlan(const SdxlUnetConfig& config);

struct LinearInfo {
  std::string path;  // module path under the UNet, e.g. input_blocks.4.1.transformer_blocks.0.attn1.to_q
  int64_t in = 0;
  int64_t out = 0;
  bool bias = true;
};

// Every Linear inside the UNet's SpatialTransformers (proj_in, proj_out and, per transformer block,
// attn1/attn2 to_q/to_k/to_v/to_out.0, ff.net.0.proj, ff.net.2), in module order. These are the
// modules sd-scripts' networks.lora targets in the SDXL UNet (with use_linear_in_transformer).
std::vector<LinearInfo> sdxlUnetTransformerLinearLayers(const SdxlUnetConfig& config);
// The above plus the time and label embedding Linears and the ResBlocks' emb_layers.1.
std::vector<LinearInfo> sdxlUnetLinearLayers(const SdxlUnetConfig& config);

}  // namespace sinter::models

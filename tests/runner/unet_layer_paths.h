#pragma once
// Module listings of a full-size model from its layout alone (no weights allocated), as the
// module-list tests compare them with sd-scripts' and LyCORIS's own listings.
#include <string>
#include <vector>

#include "models/unet/sdxl_unet_layout.h"
#include "network/lycoris_targets.h"

namespace sinter::test {

inline std::vector<network::LayerPath> linearsOf(const std::vector<models::LinearInfo>& infos) {
  std::vector<network::LayerPath> out;
  for (const auto& i : infos) out.push_back({i.path, 0});
  return out;
}

// A UNet's Linears and Conv2ds (SAI layout) from its plan: conv_in, the transformers' Linears (or
// 1x1-conv projections where the config has them), the ResBlocks' 3x3 and 1x1 skip convs,
// Downsample's op, Upsample's conv and out.2. Kernel 0 is a Linear.
inline std::vector<network::LayerPath> unetLayerPaths(const models::SdxlUnetConfig& config) {
  std::vector<network::LayerPath> out = linearsOf(models::sdxlUnetLinearLayers(config));
  if (!config.linearProjection)
    for (network::LayerPath& l : out) {
      const auto endsWith = [&](const std::string& s) {
        return l.path.size() >= s.size() && l.path.compare(l.path.size() - s.size(), s.size(), s) == 0;
      };
      if (endsWith(".proj_in") || endsWith(".proj_out")) l.kernel = 1;
    }
  const models::SdxlUnetPlan plan = models::sdxlUnetPlan(config);
  auto add = [&](const std::string& p, const models::SdxlUnetLayer& l) {
    using K = models::SdxlUnetLayer::Kind;
    if (l.kind == K::ConvIn) out.push_back({p, 3});
    if (l.kind == K::ResBlock) {
      out.push_back({p + ".in_layers.2", 3});
      out.push_back({p + ".out_layers.3", 3});
      if (l.inChannels != l.outChannels) out.push_back({p + ".skip_connection", 1});
    }
    if (l.kind == K::Downsample) out.push_back({p + ".op", 3});
    if (l.kind == K::Upsample) out.push_back({p + ".conv", 3});
  };
  for (size_t n = 0; n < plan.inputBlocks.size(); ++n)
    for (size_t m = 0; m < plan.inputBlocks[n].size(); ++m)
      add("input_blocks." + std::to_string(n) + "." + std::to_string(m), plan.inputBlocks[n][m]);
  for (size_t m = 0; m < plan.middleBlock.size(); ++m) add("middle_block." + std::to_string(m), plan.middleBlock[m]);
  for (size_t n = 0; n < plan.outputBlocks.size(); ++n)
    for (size_t m = 0; m < plan.outputBlocks[n].size(); ++m)
      add("output_blocks." + std::to_string(n) + "." + std::to_string(m), plan.outputBlocks[n][m]);
  out.push_back({"out.2", 3});
  return out;
}

}  // namespace sinter::test

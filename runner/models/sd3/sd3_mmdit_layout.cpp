#include "models/sd3/sd3_mmdit_layout.h"

#include <string>

namespace sinter::models {

std::vector<LinearInfo> sd3MmditLinearLayers(const Sd3MmditConfig& c) {
  const int64_t hidden = c.hiddenSize(), mlp = c.mlpHiddenSize();
  std::vector<LinearInfo> out;
  auto add = [&](const std::string& path, int64_t in, int64_t o) { out.push_back({path, in, o, true}); };
  add("t_embedder.mlp.0", 256, hidden);
  add("t_embedder.mlp.2", hidden, hidden);
  add("y_embedder.mlp.0", c.admInChannels, hidden);
  add("y_embedder.mlp.2", hidden, hidden);
  add("context_embedder", c.contextInFeatures, hidden);
  for (int64_t i = 0; i < c.depth; ++i) {
    const std::string block = "joint_blocks." + std::to_string(i) + ".";
    const bool last = i == c.depth - 1, attn2 = c.xBlockSelfAttnLayers.count(i) > 0;
    for (const char* stream : {"context_block", "x_block"}) {
      const std::string s = block + stream;
      const bool preOnly = last && std::string(stream) == "context_block";
      add(s + ".attn.qkv", hidden, 3 * hidden);
      if (!preOnly) add(s + ".attn.proj", hidden, hidden);
      if (attn2 && std::string(stream) == "x_block") {
        add(s + ".attn2.qkv", hidden, 3 * hidden);
        add(s + ".attn2.proj", hidden, hidden);
      }
      if (!preOnly) {
        add(s + ".mlp.fc1", hidden, mlp);
        add(s + ".mlp.fc2", mlp, hidden);
      }
      const int64_t mods = preOnly ? 2 : (attn2 && std::string(stream) == "x_block") ? 9 : 6;
      add(s + ".adaLN_modulation.1", hidden, mods * hidden);
    }
  }
  add("final_layer.linear", hidden, c.patchSize * c.patchSize * c.outChannels());
  add("final_layer.adaLN_modulation.1", hidden, 2 * hidden);
  return out;
}

}  // namespace sinter::models

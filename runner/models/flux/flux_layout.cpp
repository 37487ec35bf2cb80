#include "models/flux/flux_layout.h"

#include <string>

#include "core/ascii_text.h"

namespace sinter::models {

std::vector<LinearInfo> fluxTransformerLinearLayers(const FluxConfig& c) {
  const int64_t hidden = c.hiddenSize, mlp = c.mlpHiddenDim();
  std::vector<LinearInfo> out;
  auto add = [&](const std::string& path, int64_t in, int64_t o, bool bias = true) { out.push_back({path, in, o, bias}); };
  add("img_in", c.inChannels, hidden);
  if (c.chroma()) {  // the approximator in place of the embedders and the blocks' modulation Linears
    add("distilled_guidance_layer.in_proj", c.approximatorInDim, c.approximatorHiddenSize);
    for (int64_t i = 0; i < c.approximatorDepth; ++i) {
      const std::string layer = "distilled_guidance_layer.layers." + std::to_string(i);
      add(layer + ".in_layer", c.approximatorHiddenSize, c.approximatorHiddenSize);
      add(layer + ".out_layer", c.approximatorHiddenSize, c.approximatorHiddenSize);
    }
    add("distilled_guidance_layer.out_proj", c.approximatorHiddenSize, hidden);
  }
  for (const char* embedder : {"time_in", "vector_in", "guidance_in"}) {
    if (c.chroma() || (std::string(embedder) == "guidance_in" && !c.guidanceEmbed)) continue;
    const int64_t in = std::string(embedder) == "vector_in" ? c.vecInDim : 256;  // 256: the sinusoidal embedding
    add(std::string(embedder) + ".in_layer", in, hidden);
    add(std::string(embedder) + ".out_layer", hidden, hidden);
  }
  add("txt_in", c.contextInDim, hidden);
  for (int64_t i = 0; i < c.depth; ++i) {
    const std::string block = "double_blocks." + std::to_string(i) + ".";
    for (const char* stream : {"img", "txt"}) {
      const std::string s = block + stream;
      if (!c.chroma()) add(s + "_mod.lin", hidden, 6 * hidden);  // shift, scale, gate for attention and MLP
      add(s + "_attn.qkv", hidden, 3 * hidden, c.qkvBias);
      add(s + "_attn.proj", hidden, hidden);
      add(s + "_mlp.0", hidden, mlp);
      add(s + "_mlp.2", mlp, hidden);
    }
  }
  for (int64_t i = 0; i < c.depthSingleBlocks; ++i) {
    const std::string block = "single_blocks." + std::to_string(i) + ".";
    add(block + "linear1", hidden, 3 * hidden + mlp);  // qkv and the MLP's input side by side
    add(block + "linear2", hidden + mlp, hidden);
    if (!c.chroma()) add(block + "modulation.lin", hidden, 3 * hidden);
  }
  add("final_layer.linear", hidden, c.inChannels);
  if (!c.chroma()) add("final_layer.adaLN_modulation.1", hidden, 2 * hidden);
  return out;
}

bool fluxLinearTakesOneRowPerSample(const std::string& path) {
  for (const char* embedder : {"time_in.", "vector_in.", "guidance_in."})
    if (startsWith(path, embedder)) return true;
  return endsWith(path, "_mod.lin") || endsWith(path, ".modulation.lin") || path == "final_layer.adaLN_modulation.1";
}

bool fluxLinearIsInTextStream(const std::string& path) {
  return startsWith(path, "double_blocks.") && path.find(".txt_") != std::string::npos;
}

}  // namespace sinter::models

#include "train/flux/flux_memory_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "io/safetensors.h"
#include "train/base/checkpoint_sizes.h"

namespace sinter::train {

namespace {

// A FLUX transformer file: each block's Linear weights (2-D ".weight" tensors) and the rest, the
// LoRA units of those Linears (networks.lora_flux adapts every Linear of the blocks).
void sizeFluxTransformer(const io::SafetensorsFile& file, MemoryModel& m) {
  const std::string prefix = file.has("model.diffusion_model.img_in.weight") ? "model.diffusion_model." : "";
  BlockKind dbl{"double", 0, 0, 0}, sgl{"single", 0, 0, 0};
  int64_t trunkLinear = 0, trunkOther = 0;
  int maxDouble = -1, maxSingle = -1;
  for (const std::string& key : file.keys()) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string rest = key.substr(prefix.size());
    const io::TensorInfo& info = file.info(key);
    const bool linear = info.shape.size() == 2 && rest.size() > 7 && rest.compare(rest.size() - 7, 7, ".weight") == 0;
    auto blockIndex = [&](const std::string& head) { return std::atoi(rest.c_str() + head.size()); };
    if (rest.rfind("double_blocks.", 0) == 0 || rest.rfind("single_blocks.", 0) == 0) {
      const bool isDouble = rest[0] == 'd';
      const int index = blockIndex(isDouble ? "double_blocks." : "single_blocks.");
      int& most = isDouble ? maxDouble : maxSingle;
      most = std::max(most, index);
      if (index != 0) continue;  // the blocks of a kind are alike: block 0 sizes them
      BlockKind& b = isDouble ? dbl : sgl;
      (linear ? b.linearParams : b.otherParams) += info.numel();
    } else {
      (linear ? trunkLinear : trunkOther) += info.numel();
    }
  }
  if (maxDouble < 0 || maxSingle < 0) return;  // not a FLUX transformer: keep the full-size counts
  dbl.count = maxDouble + 1;
  sgl.count = maxSingle + 1;
  // LoRA units of block 0 of each kind times the count.
  int64_t doubleUnits = 0, singleUnits = 0;
  for (const std::string& key : file.keys()) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string rest = key.substr(prefix.size());
    const io::TensorInfo& info = file.info(key);
    if (info.shape.size() != 2 || rest.size() < 7 || rest.compare(rest.size() - 7, 7, ".weight") != 0) continue;
    if (rest.rfind("double_blocks.0.", 0) == 0) doubleUnits += info.shape[0] + info.shape[1];
    if (rest.rfind("single_blocks.0.", 0) == 0) singleUnits += info.shape[0] + info.shape[1];
  }
  // Another size than FLUX.1-dev's (a tiny test model): the measured activation costs scaled by the
  // block count and the width (Linear parameters grow with its square).
  const MemoryModel full = fluxDevMemoryModel();
  const double widthRatio = std::sqrt(static_cast<double>(sgl.linearParams) / static_cast<double>(full.blocks.at(1).linearParams));
  const double scale = widthRatio * static_cast<double>(dbl.count + sgl.count) / static_cast<double>(full.blocks[0].count + full.blocks[1].count);
  m.fullBytesPerToken *= scale;
  m.savedBytesPerToken *= scale;
  m.recomputeBytesPerToken *= scale;
  m.fixedBytes *= std::min(1.0, scale);
  m.blocks = {dbl, sgl};
  m.trunkLinearParams = trunkLinear;
  m.trunkOtherParams = trunkOther;
  m.loraUnitsDenoiser = doubleUnits * dbl.count + singleUnits * sgl.count;
  // sd-scripts' split (fluxBlockSwapSplit): s/2 doubles and (s - s/2) * 2 singles, two of each kind kept.
  m.maxBlocksToSwap = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(2 * (dbl.count - 2) + 1, 2 * ((sgl.count - 2) / 2))));
}

// T5-XXL's Linear weights (what fp8_base stores in float8): the attention's q, k, v, o and the
// feed-forward's wi_0, wi_1, wo; not its embeddings (shared, relative_attention_bias) or layer norms.
int64_t t5LinearParams(const io::SafetensorsFile& file) {
  int64_t n = 0;
  for (const std::string& key : file.keys()) {
    const bool linear = (key.find(".SelfAttention.") != std::string::npos || key.find(".DenseReluDense.") != std::string::npos) &&
                        key.find("relative_attention_bias") == std::string::npos && file.info(key).shape.size() == 2;
    if (linear) n += file.info(key).numel();
  }
  return n;
}

}  // namespace

void sizeFluxMemoryModel(const Config& config, MemoryModel& m) {
  const std::string model = config.getString("pretrained_model_name_or_path");
  if (readable(model)) sizeFluxTransformer(io::SafetensorsFile(model), m);
  int64_t encoders = 0;
  bool both = true;
  const bool chroma = fluxRunIsChroma(config);  // T5-XXL alone
  for (const char* key : {"t5xxl", "clip_l"}) {
    if (chroma && std::string(key) == "clip_l") continue;
    if (readable(config.getString(key))) encoders += fileParams(config.getString(key));
    else both = false;
  }
  if (both) m.encoderParams = encoders;
  if (readable(config.getString("t5xxl"))) m.encoderFp8LinearParams = t5LinearParams(io::SafetensorsFile(config.getString("t5xxl")));
  if (readable(config.getString("ae"))) {
    const io::SafetensorsFile ae(config.getString("ae"));
    m.autoencoderParams = numelUnder(ae, "");
    m.autoencoderEncodeScale = autoencoderEncodeScale(ae, "");
  }
}

}  // namespace sinter::train

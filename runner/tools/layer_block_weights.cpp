#include "tools/layer_block_weights.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>

#include "network/lora_targets.h"
#include <stdexcept>

namespace sinter::tools {

namespace {

constexpr int kBlocks = 26;  // BASE, IN00-IN11, MID, OUT00-OUT11

// svd_merge_lora.py's LAYER12 / LAYER17 / LAYER20 / LAYER26: which of the 26 blocks a list of that
// length gives weights to, in order.
const char* namedBlocks(size_t length) {
  switch (length) {
    case 12: return "10000110110001111111000000";
    case 17: return "10110110110001000111111111";
    case 20: return "11111111110001111111110000";
    case 26: return "11111111111111111111111111";
  }
  return nullptr;
}

}  // namespace

int lbwBlockIndex(const std::string& name, bool sdxl) {
  if (name.find("text_model_encoder_") != std::string::npos) return 0;
  if (!sdxl) {
    static const std::regex updown("(up|down)_blocks_(\\d+)_(resnets|upsamplers|downsamplers|attentions)_(\\d+)_");
    constexpr int kUpDownBlocks = 12;
    std::smatch m;
    if (std::regex_search(name, m, updown)) {
      const int i = std::stoi(m[2]), j = std::stoi(m[4]);
      const std::string kind = m[3];
      if (m[1] == "down") {
        if (kind == "resnets" || kind == "attentions") return 1 + 3 * i + j + 1;
        if (kind == "downsamplers") return 1 + 3 * (i + 1);
        return -1;
      }
      if (kind == "resnets" || kind == "attentions") return 1 + kUpDownBlocks + 1 + 3 * i + j;
      if (kind == "upsamplers") return 1 + kUpDownBlocks + 1 + 3 * i + 2;
      return -1;
    }
    return name.find("mid_block_") != std::string::npos ? 1 + kUpDownBlocks : -1;
  }
  // SDXL: the U-Net's 23 blocks as networks/lora.py numbers them (0 time/label embedding, 1-9 input
  // blocks, 10-12 the middle block's parts, 13-21 output blocks, 22 out), laid on the lbw's 26: the
  // embeddings at 1, the middle block whole at 13, the output blocks and out one further.
  const int block = network::sdxlBlockIndex(name);
  if (block < 0) return -1;
  if (block == 0) return 1;
  if (block <= 9) return block;
  if (block <= 12) return 13;
  return block + 1;
}

double LayerBlockWeights::factor(const std::string& loraName, bool sdxlNames) const {
  const int index = lbwBlockIndex(loraName, sdxlNames);
  return index >= 0 && index < kBlocks && named[index] ? weights[index] : 1.0;
}

std::vector<LayerBlockWeights> parseLayerBlockWeights(const std::vector<std::string>& lbws) {
  std::vector<LayerBlockWeights> out;
  for (const std::string& text : lbws) {
    nlohmann::json list;
    try {
      list = nlohmann::json::parse(text);
    } catch (const std::exception&) {
      throw std::invalid_argument("--lbws '" + text + "': each is a JSON list of numbers, such as [1,0,0,0,0,1,1,0,1,1,1,1]");
    }
    if (!list.is_array()) throw std::invalid_argument("--lbws '" + text + "': not a list");
    for (const auto& v : list)
      if (!v.is_number()) throw std::invalid_argument("--lbws '" + text + "': every value must be a number");
    const char* mask = namedBlocks(list.size());
    if (!mask) throw std::invalid_argument("--lbws '" + text + "': a list of 12, 17, 20 or 26 weights, not " + std::to_string(list.size()));
    if (!out.empty() && list.size() != static_cast<size_t>(std::count(out.front().named.begin(), out.front().named.end(), true)))
      throw std::invalid_argument("--lbws: every list must have the same length");
    LayerBlockWeights w;
    w.weights.assign(kBlocks, 1.0);
    w.named.assign(kBlocks, false);
    w.sdxl = list.size() == 12 || list.size() == 20;  // format_lbws' SDXL_LAYER_NUM
    size_t next = 0;
    for (int i = 0; i < kBlocks; ++i) {
      if (mask[i] != '1') continue;
      w.named[i] = true;
      w.weights[i] = list[next++].get<double>();
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace sinter::tools

#include "tools/sdxl_lora_layouts.h"

#include <regex>
#include <utility>
#include <vector>

#include "models/unet/sdxl_unet_layout.h"
#include "network/lora_targets.h"

namespace sinter::tools {

namespace {

const std::string kUnet = "lora_unet_";

std::string unetName(const std::string& path) { return network::kohyaLoraName(network::LoraComponent::Unet, path); }

// The kohya names of diffusers' U-Net modules to the SAI layout's, for full-size SDXL: one entry per
// ResBlock Conv/Linear, Downsample and Upsample, and one prefix per transformer (its children keep
// their names in both layouts).
struct DiffusersToSai {
  std::map<std::string, std::string> modules;
  std::vector<std::pair<std::string, std::string>> transformers;
};

const DiffusersToSai& diffusersToSai() {
  static const DiffusersToSai table = [] {
    DiffusersToSai t;
    const models::SdxlUnetConfig config = models::SdxlUnetConfig::full();
    const auto diffusers = [&](const std::string& sai) { return network::sdDiffusersUnetPath(sai, config.numResBlocks); };
    const auto layer = [&](const std::string& at, const models::SdxlUnetLayer& l) {
      using Kind = models::SdxlUnetLayer::Kind;
      if (l.kind == Kind::ResBlock) {
        for (const char* child : {"in_layers.2", "out_layers.3", "emb_layers.1", "skip_connection"})
          t.modules[unetName(diffusers(at + "." + child))] = unetName(at + "." + child);
      } else if (l.kind == Kind::SpatialTransformer) {
        const std::string projIn = diffusers(at + ".proj_in");
        t.transformers.emplace_back(unetName(projIn.substr(0, projIn.size() - std::string(".proj_in").size())), unetName(at));
      } else if (l.kind == Kind::Downsample) {
        t.modules[unetName(diffusers(at + ".op"))] = unetName(at + ".op");
      } else if (l.kind == Kind::Upsample) {
        t.modules[unetName(diffusers(at + ".conv"))] = unetName(at + ".conv");
      }
    };
    const models::SdxlUnetPlan plan = models::sdxlUnetPlan(config);
    for (size_t n = 0; n < plan.inputBlocks.size(); ++n)
      for (size_t m = 0; m < plan.inputBlocks[n].size(); ++m)
        layer("input_blocks." + std::to_string(n) + "." + std::to_string(m), plan.inputBlocks[n][m]);
    for (size_t m = 0; m < plan.middleBlock.size(); ++m) layer("middle_block." + std::to_string(m), plan.middleBlock[m]);
    for (size_t n = 0; n < plan.outputBlocks.size(); ++n)
      for (size_t m = 0; m < plan.outputBlocks[n].size(); ++m)
        layer("output_blocks." + std::to_string(n) + "." + std::to_string(m), plan.outputBlocks[n][m]);
    // Outside the blocks (diffusers' UNet2DConditionModel against the SAI checkpoint's names).
    for (const auto& [d, sai] : std::vector<std::pair<std::string, std::string>>{
             {"conv_in", "input_blocks.0.0"}, {"time_embedding.linear_1", "time_embed.0"}, {"time_embedding.linear_2", "time_embed.2"},
             {"add_embedding.linear_1", "label_emb.0.0"}, {"add_embedding.linear_2", "label_emb.0.2"},
             {"conv_norm_out", "out.0"}, {"conv_out", "out.2"}})
      t.modules[unetName(d)] = unetName(sai);
    return t;
  }();
  return table;
}

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// A diffusers-named U-Net module (lora_unet_...) under the SAI layout's name, or "" where SDXL has none.
std::string saiModuleName(const std::string& name) {
  const DiffusersToSai& table = diffusersToSai();
  if (const auto it = table.modules.find(name); it != table.modules.end()) return it->second;
  for (const auto& [d, sai] : table.transformers)
    if (name.size() > d.size() + 1 && startsWith(name, d) && name[d.size()] == '_') return sai + name.substr(d.size());
  return "";
}

}  // namespace

bool hasSdxlDiffusersUnetNames(const std::map<std::string, torch::Tensor>& tensors) {
  static const std::regex deepTransformer("_attentions_\\d+_transformer_blocks_([1-9]|\\d\\d+)_");
  bool diffusersBlocks = false, sdxl = false;
  for (const auto& [key, value] : tensors) {
    diffusersBlocks = diffusersBlocks || startsWith(key, kUnet + "down_blocks_") || startsWith(key, kUnet + "up_blocks_") ||
                      startsWith(key, kUnet + "mid_block_");
    sdxl = sdxl || startsWith(key, "lora_te2_") || startsWith(key, kUnet + "add_embedding_") ||
           (startsWith(key, kUnet) && std::regex_search(key, deepTransformer));
    const std::string crossKey = "_attn2_to_k.lora_down.weight";
    if (key.size() > crossKey.size() && key.compare(key.size() - crossKey.size(), crossKey.size(), crossKey) == 0)
      sdxl = sdxl || (value.dim() == 2 && value.size(1) == 2048);
  }
  return diffusersBlocks && sdxl;
}

ConvertedLora sdxlLoraWithSdScriptsNames(const std::map<std::string, torch::Tensor>& tensors) {
  ConvertedLora out;
  for (const auto& [key, value] : tensors) {
    if (!startsWith(key, kUnet)) {
      out.tensors[key] = value;
      continue;
    }
    const size_t dot = key.find('.');
    const std::string sai = saiModuleName(key.substr(0, dot));
    if (sai.empty()) {
      out.unconverted.push_back(key);
      continue;
    }
    out.tensors[sai + (dot == std::string::npos ? "" : key.substr(dot))] = value;
  }
  return out;
}

}  // namespace sinter::tools

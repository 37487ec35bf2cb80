#include "network/lora_targets.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

namespace sinter::network {

const char* loraPrefix(LoraComponent component) {
  switch (component) {
    case LoraComponent::Unet: return "lora_unet";
    case LoraComponent::TextEncoder1: return "lora_te1";
    case LoraComponent::TextEncoder2: return "lora_te2";
    case LoraComponent::TextEncoder: return "lora_te";
    case LoraComponent::TextEncoder3: return "lora_te3";
  }
  return "lora_unet";
}

const char* componentLabel(LoraComponent component) {
  switch (component) {
    case LoraComponent::Unet: return "U-Net";
    case LoraComponent::TextEncoder1: return "Text Encoder 1";
    case LoraComponent::TextEncoder2: return "Text Encoder 2";
    case LoraComponent::TextEncoder: return "Text Encoder";
    case LoraComponent::TextEncoder3: return "T5-XXL";
  }
  return "U-Net";
}

std::string kohyaLoraName(LoraComponent component, const std::string& modulePath) {
  std::string name = std::string(loraPrefix(component)) + "." + modulePath;
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

std::string loraModuleName(const LoraTargetRule& rule, const std::string& modulePath) {
  return kohyaLoraName(rule.component, rule.sdScriptsPath ? rule.sdScriptsPath(modulePath) : modulePath);
}

namespace {

std::vector<std::string> splitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) parts.push_back(path.substr(start, dot - start));
  parts.push_back(path.substr(start));
  return parts;
}

std::string joinPath(const std::vector<std::string>& parts, size_t from) {
  std::string out;
  for (size_t i = from; i < parts.size(); ++i) out += (out.empty() ? "" : ".") + parts[i];
  return out;
}

// A ResBlock's own names in diffusers' ResnetBlock2D.
std::string resnetChild(const std::vector<std::string>& parts, size_t from) {
  const std::string rest = joinPath(parts, from);
  static const std::vector<std::pair<std::string, std::string>> renames = {
      {"in_layers.0", "norm1"}, {"in_layers.2", "conv1"}, {"emb_layers.1", "time_emb_proj"},
      {"out_layers.0", "norm2"}, {"out_layers.3", "conv2"}, {"skip_connection", "conv_shortcut"}};
  for (const auto& [sai, diffusers] : renames)
    if (rest == sai || rest.rfind(sai + ".", 0) == 0) return diffusers + rest.substr(sai.size());
  return rest;
}

}  // namespace

std::string sdDiffusersUnetPath(const std::string& saiPath, int64_t numResBlocks) {
  const std::vector<std::string> parts = splitPath(saiPath);
  const int64_t perLevel = numResBlocks + 1;
  auto layer = [&](size_t at) { return parts.size() > at ? std::stoll(parts[at]) : -1; };
  if (parts[0] == "middle_block" && parts.size() > 2) {
    const int64_t m = layer(1);
    if (m == 1) return "mid_block.attentions.0." + joinPath(parts, 2);
    return "mid_block.resnets." + std::to_string(m == 0 ? 0 : 1) + "." + resnetChild(parts, 2);
  }
  if ((parts[0] != "input_blocks" && parts[0] != "output_blocks") || parts.size() < 4) return saiPath;
  const int64_t k = layer(1), m = layer(2);
  if (parts[0] == "input_blocks") {
    if (k == 0) return saiPath;  // conv_in
    const int64_t level = (k - 1) / perLevel, index = (k - 1) % perLevel;
    const std::string block = "down_blocks." + std::to_string(level) + ".";
    if (parts[3] == "op") return block + "downsamplers.0.conv" + (parts.size() > 4 ? "." + joinPath(parts, 4) : "");
    if (m == 0) return block + "resnets." + std::to_string(index) + "." + resnetChild(parts, 3);
    return block + "attentions." + std::to_string(index) + "." + joinPath(parts, 3);
  }
  const int64_t level = k / perLevel, index = k % perLevel;
  const std::string block = "up_blocks." + std::to_string(level) + ".";
  if (m == 0) return block + "resnets." + std::to_string(index) + "." + resnetChild(parts, 3);
  // An Upsample's only weight is "conv"; a transformer never has a direct child of that name.
  if (parts[3] == "conv") return block + "upsamplers.0.conv" + (parts.size() > 4 ? "." + joinPath(parts, 4) : "");
  return block + "attentions." + std::to_string(index) + "." + joinPath(parts, 3);
}

std::vector<std::string> unetTransformerParents(const std::vector<std::string>& modulePaths) {
  static const std::string marker = "transformer_blocks";
  std::set<std::string> parents;
  for (const std::string& path : modulePaths) {
    // Search segment-wise so "xtransformer_blocks" never matches.
    size_t pos = 0;
    while ((pos = path.find(marker, pos)) != std::string::npos) {
      const bool startsSegment = pos == 0 || path[pos - 1] == '.';
      const size_t after = pos + marker.size();
      const bool endsSegment = after == path.size() || path[after] == '.';
      if (startsSegment && endsSegment) {
        parents.insert(pos == 0 ? std::string() : path.substr(0, pos - 1));
        break;
      }
      pos = after;
    }
  }
  return {parents.begin(), parents.end()};
}

bool isUnetLoraTarget(const std::string& linearPath, const std::vector<std::string>& transformerParents) {
  for (const std::string& parent : transformerParents) {
    if (parent.empty()) return true;  // the root itself is a transformer
    if (linearPath.size() > parent.size() + 1 && linearPath.compare(0, parent.size(), parent) == 0 &&
        linearPath[parent.size()] == '.')
      return true;
  }
  return false;
}

namespace {

// The last segment of a path's parent: "mlp" for "text_model.encoder.layers.0.mlp.fc1".
std::string parentName(const std::string& path) {
  const size_t lastDot = path.rfind('.');
  if (lastDot == std::string::npos) return "";
  const std::string parent = path.substr(0, lastDot);
  const size_t parentDot = parent.rfind('.');
  return parentDot == std::string::npos ? parent : parent.substr(parentDot + 1);
}

}  // namespace

bool isTextEncoderLoraTarget(const std::string& linearPath) {
  const std::string parent = parentName(linearPath);
  return parent == "self_attn" || parent == "mlp";
}

bool isT5LoraTarget(const std::string& linearPath) {
  const std::string parent = parentName(linearPath);
  return parent == "SelfAttention" || parent == "DenseReluDense";
}

bool isSdxlConvBlockPath(const std::string& path) {
  if (path.rfind("input_blocks.", 0) != 0 && path.rfind("middle_block.", 0) != 0 && path.rfind("output_blocks.", 0) != 0)
    return false;
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) parts.push_back(path.substr(start, dot - start));
  parts.push_back(path.substr(start));
  const std::string& last = parts.back();
  if (last == "skip_connection" || last == "op" || last == "conv") return true;  // ResBlock's 1x1, Downsample, Upsample
  if (parts.size() < 2) return false;
  const std::string& parent = parts[parts.size() - 2];
  return parent == "in_layers" || parent == "out_layers" || parent == "emb_layers";
}

int sdxlBlockIndex(const std::string& loraName) {
  static const std::string prefix = "lora_unet_";
  if (loraName.rfind(prefix, 0) != 0) return -1;
  const std::string name = loraName.substr(prefix.size());
  auto numberAfter = [&](size_t at) {
    size_t end = at;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    return end == at ? -1 : std::stoi(name.substr(at, end - at));
  };
  if (name.rfind("time_embed_", 0) == 0 || name.rfind("label_emb_", 0) == 0) return 0;
  if (name.rfind("input_blocks_", 0) == 0) return 1 + numberAfter(13);
  if (name.rfind("middle_block_", 0) == 0) return 10 + numberAfter(13);
  if (name.rfind("output_blocks_", 0) == 0) return 13 + numberAfter(14);
  if (name.rfind("out_", 0) == 0) return 22;
  return -1;
}

LoraTargetRule sdxlLoraRule(LoraComponent component) {
  LoraTargetRule rule;
  rule.component = component;
  if (component == LoraComponent::Unet) {
    rule.selectInConvBlocks = [](const std::vector<std::string>& paths) {
      std::vector<bool> chosen;
      for (const std::string& path : paths) chosen.push_back(isSdxlConvBlockPath(path));
      return chosen;
    };
    rule.select = [](const std::vector<std::string>& linearPaths) {
      // Every transformer block holds Linears, so their paths show the transformer parents.
      const std::vector<std::string> parents = unetTransformerParents(linearPaths);
      std::vector<bool> chosen;
      for (const std::string& path : linearPaths) chosen.push_back(isUnetLoraTarget(path, parents));
      return chosen;
    };
  } else {
    rule.select = [](const std::vector<std::string>& linearPaths) {
      std::vector<bool> chosen;
      for (const std::string& path : linearPaths) chosen.push_back(isTextEncoderLoraTarget(path));
      return chosen;
    };
  }
  return rule;
}

LoraTargetRule sdLoraRule(LoraComponent component, int64_t numResBlocks, int64_t textEncoderLayers) {
  if (component == LoraComponent::Unet) {
    LoraTargetRule rule = sdxlLoraRule(component);
    rule.selectsConv1x1 = true;
    rule.sdScriptsPath = [numResBlocks](const std::string& path) { return sdDiffusersUnetPath(path, numResBlocks); };
    return rule;
  }
  LoraTargetRule rule = sdxlLoraRule(component);
  if (textEncoderLayers > 0) {
    rule.notInSdScriptsModel = [textEncoderLayers](const std::string& path) {
      static const std::string layers = "encoder.layers.";
      const size_t at = path.find(layers);
      return at != std::string::npos && std::stoll(path.substr(at + layers.size())) >= textEncoderLayers;
    };
  }
  return rule;
}

LoraTargetRule fluxLoraRule(LoraComponent component, const std::string& trainBlocks) {
  if (component != LoraComponent::Unet) {
    LoraTargetRule clip = sdxlLoraRule(component);  // CLIP's attention and MLP
    clip.module = LoraNetworkModule::LoraFlux;
    return clip;
  }
  if (trainBlocks != "all" && trainBlocks != "double" && trainBlocks != "single")
    throw std::invalid_argument("network_args train_blocks='" + trainBlocks + "' is not one of all, double, single");
  LoraTargetRule rule;
  rule.component = component;
  rule.module = LoraNetworkModule::LoraFlux;
  const bool doubles = trainBlocks != "single", singles = trainBlocks != "double";
  rule.select = [doubles, singles](const std::vector<std::string>& linearPaths) {
    std::vector<bool> chosen;
    for (const std::string& path : linearPaths)
      chosen.push_back((doubles && path.rfind("double_blocks.", 0) == 0) || (singles && path.rfind("single_blocks.", 0) == 0));
    return chosen;
  };
  return rule;
}

LoraTargetRule fluxT5LoraRule() {
  LoraTargetRule rule;
  rule.component = LoraComponent::TextEncoder3;
  rule.module = LoraNetworkModule::LoraFlux;
  rule.select = [](const std::vector<std::string>& linearPaths) {
    std::vector<bool> chosen;
    for (const std::string& path : linearPaths) chosen.push_back(isT5LoraTarget(path));
    return chosen;
  };
  return rule;
}

std::optional<size_t> sd3EmbeddingPart(const std::string& loraName) {
  static const std::vector<std::string> filters{"context_embedder", "_t_embedder", "x_embedder",
                                                "y_embedder",       "final_layer_adaLN_modulation", "final_layer_linear"};
  for (size_t i = 0; i < filters.size(); ++i)
    if (loraName.find(filters[i]) != std::string::npos) return i;
  return std::nullopt;
}

LoraTargetRule sd3LoraRule(LoraComponent component, const std::vector<int64_t>& embDims) {
  LoraTargetRule rule = component == LoraComponent::TextEncoder3 ? fluxT5LoraRule()
                        : component == LoraComponent::Unet       ? LoraTargetRule{}
                                                                 : sdxlLoraRule(component);  // CLIP's attention and MLP
  rule.module = LoraNetworkModule::LoraSd3;
  if (component != LoraComponent::Unet) return rule;
  rule.component = component;
  // emb_dims' modules, by the part of the kohya name lora_sd3 filters on ("x_embedder.proj" -> "lora_unet_x_embedder_proj").
  auto embedded = [embDims](const std::string& path) {
    const std::optional<size_t> part = sd3EmbeddingPart(kohyaLoraName(LoraComponent::Unet, path));
    return part && *part < embDims.size() && embDims[*part] > 0 && path.rfind("joint_blocks.", 0) != 0;
  };
  rule.select = [embedded](const std::vector<std::string>& linearPaths) {
    std::vector<bool> chosen;
    for (const std::string& path : linearPaths)
      chosen.push_back((path.rfind("joint_blocks.", 0) == 0 &&
                        (path.find(".context_block.") != std::string::npos || path.find(".x_block.") != std::string::npos)) ||
                       embedded(path));
    return chosen;
  };
  rule.selectInConvBlocks = [embedded](const std::vector<std::string>& paths) {
    std::vector<bool> chosen;
    for (const std::string& path : paths) chosen.push_back(path == "x_embedder.proj" && embedded(path));
    return chosen;
  };
  return rule;
}

LoraNetworkModule loraNetworkModuleNamed(const std::string& networkModule) {
  if (networkModule == "networks.lora_flux") return LoraNetworkModule::LoraFlux;
  if (networkModule == "networks.lora_sd3") return LoraNetworkModule::LoraSd3;
  return LoraNetworkModule::Lora;
}

const char* loraNetworkModuleName(LoraNetworkModule module) {
  switch (module) {
    case LoraNetworkModule::LoraFlux: return "networks.lora_flux";
    case LoraNetworkModule::LoraSd3: return "networks.lora_sd3";
    case LoraNetworkModule::Lora: break;
  }
  return "networks.lora";
}

std::vector<LoraModuleShape> listLoraModules(const LoraTargetRule& rule, const std::vector<LinearShape>& linears) {
  std::vector<std::string> paths;
  paths.reserve(linears.size());
  for (const LinearShape& l : linears) paths.push_back(l.path);
  const std::vector<bool> chosen = rule.select(paths);
  std::vector<LoraModuleShape> modules;
  for (size_t i = 0; i < linears.size(); ++i) {
    if (!chosen[i] || (rule.notInSdScriptsModel && rule.notInSdScriptsModel(linears[i].path))) continue;
    const LinearShape& l = linears[i];
    modules.push_back({loraModuleName(rule, l.path), l.path, rule.component, l.inFeatures, l.outFeatures});
  }
  return modules;
}

}  // namespace sinter::network

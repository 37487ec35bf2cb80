#include "network/lycoris_targets.h"

#include <set>

namespace sinter::network {

namespace {

// The module classes of lycoris/config.py's target lists that exist in these models.
enum class Container { Transformer2D, ResBlock, Downsample, Upsample, CrossAttention, ClipAttention, ClipMlp, DoubleBlock,
                       SingleBlock, SelfAttention, SingleDiTBlock };

std::set<Container> unetTargets(LycorisPreset preset) {
  using C = Container;
  switch (preset) {
    case LycorisPreset::Full:
      return {C::Transformer2D, C::ResBlock, C::Downsample, C::Upsample, C::DoubleBlock, C::SingleBlock, C::SingleDiTBlock};
    case LycorisPreset::FullLin: return {C::Transformer2D, C::ResBlock, C::DoubleBlock, C::SingleBlock, C::SingleDiTBlock};
    case LycorisPreset::AttnMlp:
    case LycorisPreset::UnetTransformerOnly: return {C::Transformer2D, C::DoubleBlock, C::SingleBlock, C::SingleDiTBlock};
    case LycorisPreset::AttnOnly: return {C::CrossAttention, C::SelfAttention};
    case LycorisPreset::UnetConvblockOnly: return {C::ResBlock, C::Downsample, C::Upsample};
  }
  return {};
}

std::set<Container> textEncoderTargets(LycorisPreset preset) {
  switch (preset) {
    case LycorisPreset::Full:
    case LycorisPreset::FullLin:
    case LycorisPreset::AttnMlp: return {Container::ClipAttention, Container::ClipMlp};
    case LycorisPreset::AttnOnly: return {Container::ClipAttention};
    default: return {};
  }
}

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) parts.push_back(path.substr(start, dot - start));
  parts.push_back(path.substr(start));
  return parts;
}

bool hasSegment(const std::vector<std::string>& parts, const std::string& s) {
  for (const std::string& p : parts)
    if (p == s) return true;
  return false;
}

// The target classes a layer lies inside.
std::set<Container> containersOf(LoraNetworkModule module, LoraComponent component, const std::string& path,
                                 const std::vector<std::string>& transformerParents) {
  std::set<Container> in;
  const std::vector<std::string> parts = segments(path);
  if (component != LoraComponent::Unet) {
    const std::string parent = parts.size() >= 2 ? parts[parts.size() - 2] : "";
    if (parent == "self_attn") in.insert(Container::ClipAttention);
    if (parent == "mlp") in.insert(Container::ClipMlp);
    return in;
  }
  if (module == LoraNetworkModule::LoraFlux) {
    if (parts.size() >= 3 && parts[0] == "double_blocks") {
      in.insert(Container::DoubleBlock);
      if (parts[2] == "img_attn" || parts[2] == "txt_attn") in.insert(Container::SelfAttention);
    }
    if (parts.size() >= 3 && parts[0] == "single_blocks") in.insert(Container::SingleBlock);
    return in;
  }
  if (module == LoraNetworkModule::LoraSd3) {
    // A joint block's two SingleDiTBlocks; its attention (AttentionLinears) is no target class of any preset.
    if (parts.size() >= 4 && parts[0] == "joint_blocks" && (parts[2] == "context_block" || parts[2] == "x_block"))
      in.insert(Container::SingleDiTBlock);
    return in;
  }
  if (isUnetLoraTarget(path, transformerParents)) {
    in.insert(Container::Transformer2D);
    if (hasSegment(parts, "attn1") || hasSegment(parts, "attn2")) in.insert(Container::CrossAttention);
  } else if (isSdxlConvBlockPath(path)) {
    const std::string& last = parts.back();
    in.insert(last == "op" ? Container::Downsample : last == "conv" ? Container::Upsample : Container::ResBlock);
  }
  return in;
}

}  // namespace

const std::vector<std::string>& lycorisPresetNames() {
  static const std::vector<std::string> names{"full",     "full-lin", "attn-mlp", "attn-only", "unet-transformer-only",
                                              "unet-convblock-only"};
  return names;
}

std::optional<LycorisPreset> parseLycorisPreset(const std::string& name) {
  const auto& names = lycorisPresetNames();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<LycorisPreset>(i);
  return std::nullopt;
}

bool lycorisPresetEnablesConv(LycorisPreset preset) {
  return preset == LycorisPreset::Full || preset == LycorisPreset::UnetConvblockOnly;
}

std::vector<bool> lycorisSelect(LycorisPreset preset, LoraNetworkModule module, LoraComponent component,
                                const std::vector<LayerPath>& layers, int64_t convDim) {
  const bool convs = lycorisPresetEnablesConv(preset) && convDim > 0;
  const std::set<Container> targets = component == LoraComponent::Unet ? unetTargets(preset) : textEncoderTargets(preset);
  std::vector<std::string> linearPaths;
  for (const LayerPath& l : layers)
    if (l.kernel == 0) linearPaths.push_back(l.path);
  const std::vector<std::string> parents =
      component == LoraComponent::Unet && module == LoraNetworkModule::Lora ? unetTransformerParents(linearPaths) : std::vector<std::string>{};
  std::vector<bool> chosen;
  chosen.reserve(layers.size());
  for (const LayerPath& l : layers) {
    bool in = false;
    for (Container c : containersOf(module, component, l.path, parents)) in |= targets.count(c) > 0;
    chosen.push_back(in && (l.kernel <= 1 || convs));
  }
  return chosen;
}

}  // namespace sinter::network

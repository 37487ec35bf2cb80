#include "network/checkpoint_lora_names.h"

#include <set>

#include "models/text_encoders/open_clip_text_model.h"

namespace sinter::network {

namespace {

bool startsWith(const std::string& s, const std::string& head) { return s.compare(0, head.size(), head) == 0; }

void add(std::map<std::string, LoraWeightSlot>& slots, const CheckpointLoraPart& part, size_t partIndex, const std::string& modulePath,
         LoraWeightSlot slot) {
  slot.modulePath = modulePath;
  slot.part = partIndex;
  slots.emplace(loraModuleName(part.rule, modulePath), std::move(slot));
}

// An OpenCLIP key "transformer.resblocks.N.<tensor>" as the Hugging Face modules it holds.
void addOpenClip(std::map<std::string, LoraWeightSlot>& slots, const CheckpointLoraPart& part, size_t partIndex, const std::string& key,
                 const std::string& stem, const std::vector<int64_t>& shape) {
  static const std::string blocks = "transformer.resblocks.";
  if (!startsWith(stem, blocks)) return;
  const size_t dot = stem.find('.', blocks.size());
  if (dot == std::string::npos) return;
  const std::string layer = "text_model.encoder.layers." + stem.substr(blocks.size(), dot - blocks.size()) + ".";
  const std::string tensor = stem.substr(dot + 1);
  for (const models::OpenClipBlockTensor& t : models::openClipBlockTensors()) {
    if (tensor != std::string(t.openClip) + t.separator + "weight") continue;
    const int64_t rows = shape[0] / static_cast<int64_t>(t.huggingFace.size());
    for (size_t i = 0; i < t.huggingFace.size(); ++i) {
      std::vector<int64_t> moduleShape = shape;
      moduleShape[0] = rows;
      add(slots, part, partIndex, layer + t.huggingFace[i], {key, static_cast<int64_t>(i) * rows, t.huggingFace.size() > 1 ? rows : -1, moduleShape});
    }
  }
}

}  // namespace

std::map<std::string, LoraWeightSlot> checkpointLoraSlots(const std::map<std::string, std::vector<int64_t>>& shapes,
                                                          const std::vector<CheckpointLoraPart>& parts) {
  std::map<std::string, LoraWeightSlot> slots;
  for (size_t p = 0; p < parts.size(); ++p) {
    const CheckpointLoraPart& part = parts[p];
    for (const auto& [key, shape] : shapes) {
      if (!startsWith(key, part.prefix) || (shape.size() != 2 && shape.size() != 4)) continue;
      const std::string stem = key.substr(part.prefix.size());
      if (part.layout == CheckpointPartLayout::OpenClip) {
        addOpenClip(slots, part, p, key, stem, shape);
        continue;
      }
      static const std::string weight = ".weight";
      if (stem.size() <= weight.size() || stem.compare(stem.size() - weight.size(), weight.size(), weight) != 0) continue;
      std::string path = stem.substr(0, stem.size() - weight.size());
      if (part.layout == CheckpointPartLayout::HuggingFaceClip && !startsWith(path, "text_model.")) path = "text_model." + path;
      add(slots, part, p, path, {key, 0, -1, shape});
    }
  }
  return slots;
}

std::vector<std::string> sdScriptsLoraTargets(const std::map<std::string, LoraWeightSlot>& slots,
                                              const std::vector<CheckpointLoraPart>& parts, bool convBlocks) {
  std::vector<std::string> targets;
  for (size_t p = 0; p < parts.size(); ++p) {
    const LoraTargetRule& rule = parts[p].rule;
    std::vector<std::string> names, paths;  // the candidates of `select`: Linears (and 1x1 convs where taken)
    std::vector<std::string> blockNames, blockPaths;  // every weight, for the conv blocks
    for (const auto& [name, slot] : slots) {
      if (slot.part != p || (rule.notInSdScriptsModel && rule.notInSdScriptsModel(slot.modulePath))) continue;
      const bool pointwise = slot.shape.size() == 2 || (slot.shape[2] == 1 && slot.shape[3] == 1);
      if (slot.shape.size() == 2 || (pointwise && rule.selectsConv1x1)) {
        names.push_back(name);
        paths.push_back(slot.modulePath);
      }
      blockNames.push_back(name);
      blockPaths.push_back(slot.modulePath);
    }
    std::set<std::string> chosen;
    const std::vector<bool> selected = rule.select(paths);
    for (size_t i = 0; i < names.size(); ++i)
      if (selected[i]) chosen.insert(names[i]);
    if (convBlocks && rule.selectInConvBlocks) {
      const std::vector<bool> inBlocks = rule.selectInConvBlocks(blockPaths);
      for (size_t i = 0; i < blockNames.size(); ++i)
        if (inBlocks[i]) chosen.insert(blockNames[i]);
    }
    for (const auto& [name, slot] : slots)
      if (chosen.count(name)) targets.push_back(name);
  }
  return targets;
}

}  // namespace sinter::network

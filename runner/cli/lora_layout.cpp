#include "cli/lora_layout.h"

#include <nlohmann/json.hpp>

#include "network/lora_targets.h"

namespace sinter::runner {

namespace {

const char* componentKey(network::LoraComponent c) {
  switch (c) {
    case network::LoraComponent::TextEncoder1: return "te1";
    case network::LoraComponent::TextEncoder2: return "te2";
    case network::LoraComponent::TextEncoder3: return "te3";
    default: return "unet";
  }
}

}  // namespace

std::string loraLayoutJson(const std::string& family, bool tiny, const train::LoraLayoutModels& models) {
  nlohmann::json modules = nlohmann::json::array();
  for (const auto& [rule, linears] : models)
    for (const network::LoraModuleShape& m : network::listLoraModules(rule, linears))
      modules.push_back({{"name", m.name}, {"component", componentKey(m.component)}, {"in", m.inFeatures}, {"out", m.outFeatures}});
  const nlohmann::json layout{{"family", family}, {"model_size", tiny ? "tiny" : "full"}, {"count", modules.size()}, {"modules", modules}};
  return layout.dump(1);
}

}  // namespace sinter::runner

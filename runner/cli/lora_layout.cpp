#include "cli/lora_layout.h"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <vector>

#include "models/clip_text_model.h"
#include "models/flux_config.h"
#include "models/flux_layout.h"
#include "models/sdxl_checkpoint.h"
#include "models/sdxl_unet_layout.h"
#include "models/t5_encoder.h"
#include "network/lora_targets.h"

namespace sinter::runner {

namespace {

std::vector<network::LinearShape> shapes(const std::vector<models::LinearInfo>& layers) {
  std::vector<network::LinearShape> out;
  for (const models::LinearInfo& l : layers) out.push_back({l.path, l.in, l.out});
  return out;
}

const char* componentKey(network::LoraComponent c) {
  switch (c) {
    case network::LoraComponent::TextEncoder1: return "te1";
    case network::LoraComponent::TextEncoder2: return "te2";
    case network::LoraComponent::TextEncoder3: return "te3";
    default: return "unet";
  }
}

}  // namespace

std::string loraLayoutJson(const std::string& family, bool tiny, bool textEncoders, const std::string& trainBlocks, bool trainT5xxl) {
  using network::LoraComponent;
  // (rule, Linear layers) per model, text encoders first.
  std::vector<std::pair<network::LoraTargetRule, std::vector<network::LinearShape>>> models;
  const models::SdxlCheckpointConfig sdxl = tiny ? models::SdxlCheckpointConfig::tiny() : models::SdxlCheckpointConfig::full();
  if (family == "sdxl") {
    if (textEncoders) {
      models.emplace_back(network::sdxlLoraRule(LoraComponent::TextEncoder1), shapes(models::clipTextLinearLayers(sdxl.clipL)));
      models.emplace_back(network::sdxlLoraRule(LoraComponent::TextEncoder2), shapes(models::clipTextLinearLayers(sdxl.bigG)));
    }
    models.emplace_back(network::sdxlLoraRule(LoraComponent::Unet), shapes(models::sdxlUnetLinearLayers(sdxl.unet)));
  } else if (family == "flux") {
    // FLUX's CLIP-L is SDXL's first text encoder (clip_l.safetensors); T5-XXL gets none unless train_t5xxl.
    if (textEncoders)
      models.emplace_back(network::fluxLoraRule(LoraComponent::TextEncoder1), shapes(models::clipTextLinearLayers(sdxl.clipL)));
    if (textEncoders && trainT5xxl)
      models.emplace_back(network::fluxT5LoraRule(),
                          shapes(models::t5EncoderLinearLayers(tiny ? models::T5EncoderConfig::tiny() : models::T5EncoderConfig::xxl())));
    const models::FluxConfig flux = tiny ? models::FluxConfig::tiny() : models::FluxConfig::dev();
    models.emplace_back(network::fluxLoraRule(LoraComponent::Unet, trainBlocks),
                        shapes(models::fluxTransformerLinearLayers(flux)));
  } else {
    throw std::invalid_argument("--print_lora_layout lists the sdxl and flux families, not '" + family + "'");
  }
  nlohmann::json modules = nlohmann::json::array();
  for (const auto& [rule, linears] : models)
    for (const network::LoraModuleShape& m : network::listLoraModules(rule, linears))
      modules.push_back({{"name", m.name}, {"component", componentKey(m.component)}, {"in", m.inFeatures}, {"out", m.outFeatures}});
  const nlohmann::json layout{{"family", family}, {"model_size", tiny ? "tiny" : "full"}, {"count", modules.size()}, {"modules", modules}};
  return layout.dump(1);
}

}  // namespace sinter::runner

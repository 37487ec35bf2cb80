#include "tools/lora_merge_inputs.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "network/lora_file.h"
#include "tools/tool_files.h"

namespace sinter::tools {

std::vector<LoraToMerge> lorasToMerge(const ToolFlags& flags) {
  const std::vector<std::string> paths = flags.list("models");
  const std::vector<double> ratios = flags.numbers("ratios");
  if (paths.empty()) throw std::invalid_argument("--models: at least one LoRA file to merge is required");
  if (paths.size() != ratios.size())
    throw std::invalid_argument("--models names " + std::to_string(paths.size()) + " file(s) and --ratios gives " +
                                std::to_string(ratios.size()) + " ratio(s): one ratio per LoRA");
  const std::vector<std::string> lbwTexts = flags.list("lbws");
  if (!lbwTexts.empty() && lbwTexts.size() != paths.size())
    throw std::invalid_argument("--lbws gives " + std::to_string(lbwTexts.size()) + " list(s) for " + std::to_string(paths.size()) +
                                " LoRA file(s): one per LoRA");
  const std::vector<LayerBlockWeights> lbws = parseLayerBlockWeights(lbwTexts);
  std::vector<LoraToMerge> loras;
  for (size_t i = 0; i < paths.size(); ++i) {
    requireSafetensorsPath("--models", paths[i], false);
    LoraWithEmbeddings read = splitBundledEmbeddings(readToolLora(paths[i]), paths[i]);
    loras.push_back({paths[i], ratios[i], std::move(read.modules), lbws.empty() ? std::nullopt : std::optional(lbws[i]),
                     network::readLoraMetadata(paths[i]), std::move(read.embeddings)});
  }
  return loras;
}

std::vector<BundledEmbedding> carriedEmbeddings(const std::vector<LoraToMerge>& loras) {
  std::vector<std::vector<BundledEmbedding>> perFile;
  for (const LoraToMerge& lora : loras) perFile.push_back(lora.embeddings);
  std::vector<BundledEmbedding> embeddings = combineBundledEmbeddings(perFile);
  for (const BundledEmbedding& e : embeddings) spdlog::info("bundled embedding {} from {}", e.describe(), e.path);
  return embeddings;
}

network::Metadata mergedLoraMetadata(const std::vector<LoraToMerge>& loras, const std::string& dims, const std::string& alphas,
                                     bool noMetadata, const std::string& saveTo) {
  network::Metadata metadata{{"ss_network_dim", dims}, {"ss_network_alpha", alphas}};
  network::ModelSpecBasics basics;
  std::vector<std::string> from;
  for (const LoraToMerge& lora : loras) {
    from.push_back(lora.path);
    const network::Metadata& m = lora.metadata;
    for (const char* key : {"ss_v2", "ss_base_model_version", "ss_network_module"})
      if (m.count(key) && !metadata.count(key)) metadata[key] = m.at(key);
    auto fill = [&](std::string& field, const char* key) {
      if (field.empty() && m.count(key)) field = m.at(key);
    };
    fill(basics.architecture, "modelspec.architecture");
    fill(basics.implementation, "modelspec.implementation");
    fill(basics.resolution, "modelspec.resolution");
    fill(basics.predictionType, "modelspec.prediction_type");
  }
  if (!metadata.count("ss_network_module")) metadata["ss_network_module"] = "networks.lora";
  static const std::string loraSuffix = "/lora";
  if (basics.architecture.size() > loraSuffix.size() &&
      basics.architecture.compare(basics.architecture.size() - loraSuffix.size(), loraSuffix.size(), loraSuffix) == 0)
    basics.architecture.resize(basics.architecture.size() - loraSuffix.size());
  if (!noMetadata)
    for (const auto& kv : network::toolModelSpec(basics, true, fileStem(saveTo), mergedFromTitles(from), network::unixTimeNow()))
      metadata[kv.first] = kv.second;
  return metadata;
}

}  // namespace sinter::tools

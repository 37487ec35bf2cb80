#include "network/lora_file.h"

#include "io/safetensors.h"

namespace sinter::network {

torch::Dtype savePrecisionDtype(const std::string& savePrecision) {
  if (savePrecision.empty() || savePrecision == "float" || savePrecision == "fp32") return torch::kFloat32;
  if (savePrecision == "fp16") return torch::kFloat16;
  if (savePrecision == "bf16") return torch::kBFloat16;
  throw LoraError("save_precision '" + savePrecision + "' is not one of float, fp16, bf16");
}

void saveLoraFile(const LoraNetwork& network, const std::string& path, torch::Dtype dtype, const Metadata& metadata) {
  io::writeSafetensors(path, network.stateDict(dtype), metadata);
}

std::map<std::string, torch::Tensor> readLoraTensors(const std::string& path) {
  try {
    io::SafetensorsFile file(path);
    std::map<std::string, torch::Tensor> tensors;
    for (const std::string& key : file.keys()) tensors[key] = file.tensor(key).clone();
    return tensors;
  } catch (const io::SafetensorsError& e) {
    throw LoraError(std::string("LoRA weights: ") + e.what());
  }
}

Metadata readLoraMetadata(const std::string& path) {
  try {
    io::SafetensorsFile file(path);
    return file.metadata();
  } catch (const io::SafetensorsError& e) {
    throw LoraError(std::string("LoRA weights: ") + e.what());
  }
}

std::map<std::string, LoraRankAlpha> readLoraModuleRanks(const std::map<std::string, torch::Tensor>& tensors) {
  std::map<std::string, LoraRankAlpha> ranks;
  std::map<std::string, double> alphas;
  for (const auto& [key, value] : tensors) {
    const size_t dot = key.find('.');
    if (dot == std::string::npos) continue;
    const std::string name = key.substr(0, dot);
    const std::string rest = key.substr(dot + 1);
    if (rest == "alpha" && value.numel() == 1) alphas[name] = value.to(torch::kFloat64).item<double>();
    else if (rest == "lora_down.weight" && value.dim() >= 2) ranks[name].rank = value.size(0);
  }
  for (auto& [name, ra] : ranks) {
    auto it = alphas.find(name);
    ra.alpha = it != alphas.end() ? it->second : static_cast<double>(ra.rank);  // old files without alpha
  }
  return ranks;
}

LoraLoadReport loadLoraFile(LoraNetwork& network, const std::string& path) {
  return network.loadStateDict(readLoraTensors(path), path);
}

namespace {

// "a, b, c and 12 more".
std::string firstFew(const std::vector<std::string>& names) {
  constexpr size_t kNamed = 3;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kNamed; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kNamed) out += " and " + std::to_string(names.size() - kNamed) + " more";
  return out;
}

}  // namespace

std::vector<std::string> checkWeightsMatch(const LoraLoadReport& report, size_t networkModules, const std::string& path,
                                           bool partialAllowed) {
  const std::string unexpected =
      report.unexpected.empty() ? "" : std::to_string(report.unexpected.size()) + " of its keys name no module of this network (" +
                                           firstFew(report.unexpected) + ")";
  const std::string matched = "network_weights: " + path + " matches " + std::to_string(report.loadedModules) + " of this network's " +
                              std::to_string(networkModules) + " modules";
  if (report.loadedModules == 0)
    throw LoraError(matched + " (not matched: " + firstFew(report.missing) + ")" + (unexpected.empty() ? "" : "; " + unexpected) +
                    ": it is no LoRA of this model and network (a base checkpoint, another model family's LoRA, or other network "
                    "settings: network_module, network_train_unet_only, conv_dim)");
  std::vector<std::string> warnings;
  if (!report.missing.empty()) {
    if (!partialAllowed)
      throw LoraError(matched + " (not matched: " + firstFew(report.missing) + ")" + (unexpected.empty() ? "" : "; " + unexpected) +
                      "; set network_weights_partial = true to load the modules that match and train the others from scratch");
    warnings.push_back(matched + "; network_weights_partial: the other " + std::to_string(report.missing.size()) + " (" +
                       firstFew(report.missing) + ") start fresh");
  }
  if (!unexpected.empty()) warnings.push_back("network_weights: " + path + ": " + unexpected + "; they are not loaded");
  return warnings;
}

}  // namespace sinter::network

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

}  // namespace sinter::network

#include "tools/tool_files.h"

#include <filesystem>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "io/safetensors.h"
#include "network/lora_file.h"
#include "tools/bundled_embeddings.h"
#include "tools/flux_lora_layouts.h"
#include "tools/sdxl_lora_layouts.h"

namespace sinter::tools {

void requireSafetensorsPath(const std::string& flag, const std::string& path, bool writing) {
  static const std::string extension = ".safetensors";
  if (path.size() >= extension.size() && path.compare(path.size() - extension.size(), extension.size(), extension) == 0) return;
  throw std::invalid_argument(flag + " '" + path + "': Sinter " + (writing ? "writes" : "reads") +
                              " .safetensors files only (sd-scripts' .ckpt/.pt are pickles)");
}

torch::Device toolDevice(const std::string& flag, const std::string& name) {
  std::optional<torch::Device> device;
  try {
    device = torch::Device(name);
  } catch (const std::exception&) {
    throw std::invalid_argument(flag + ": '" + name + "' is no device (cpu, cuda or cuda:N)");
  }
  if (device->is_cuda() && !torch::cuda::is_available())
    throw std::invalid_argument(flag + " " + name + ": this build or machine has no CUDA GPU");
  return *device;
}

std::map<std::string, torch::Tensor> readToolLora(const std::string& path) {
  std::map<std::string, torch::Tensor> tensors = network::readLoraTensors(path);
  // Bundled embeddings (bundle_emb.*) are no module of any layout: they pass the conversions unchanged.
  std::map<std::string, torch::Tensor> bundled;
  for (auto it = tensors.begin(); it != tensors.end();)
    if (isBundledEmbeddingKey(it->first)) {
      bundled.insert(*it);
      it = tensors.erase(it);
    } else {
      ++it;
    }
  const auto withBundled = [&bundled](std::map<std::string, torch::Tensor> modules) {
    modules.insert(bundled.begin(), bundled.end());
    return modules;
  };
  if (hasSdxlDiffusersUnetNames(tensors)) {
    ConvertedLora converted = sdxlLoraWithSdScriptsNames(tensors);
    spdlog::info("{}: an SDXL LoRA with diffusers' U-Net names (OneTrainer's), read under sd-scripts' names", path);
    if (!converted.unconverted.empty())
      spdlog::warn("{}: {} tensors name no module of SDXL's U-Net and are left out, such as {}", path, converted.unconverted.size(),
                   converted.unconverted.front());
    return withBundled(std::move(converted.tensors));
  }
  const std::optional<FluxLoraLayout> layout = detectOtherFluxLoraLayout(tensors);
  if (!layout) return withBundled(std::move(tensors));
  ConvertedLora converted = convertFluxLora(tensors, *layout, FluxLoraLayout::Kohya);
  spdlog::info("{}: a FLUX LoRA in {}'s layout, read as sd-scripts' ({} modules)", path, fluxLoraLayoutName(*layout),
               converted.tensors.size() / 3);
  if (!converted.unconverted.empty())
    spdlog::warn("{}: {} tensors have no counterpart in sd-scripts' FLUX LoRA and are left out, such as {}", path,
                 converted.unconverted.size(), converted.unconverted.front());
  return withBundled(std::move(converted.tensors));
}

std::pair<int64_t, int64_t> newRankFlags(const ToolFlags& flags) {
  const int64_t rank = flags.integer("new_rank").value_or(4);
  const int64_t convRank = flags.integer("new_conv_rank").value_or(rank);
  if (rank < 1) throw std::invalid_argument("--new_rank must be at least 1, not " + std::to_string(rank));
  if (convRank < 1) throw std::invalid_argument("--new_conv_rank must be at least 1, not " + std::to_string(convRank));
  return {rank, convRank};
}

std::string fileStem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

std::string mergedFromTitles(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& path : paths) {
    const std::map<std::string, std::string> metadata = io::SafetensorsFile(path).metadata();
    const auto title = metadata.find("modelspec.title");
    out += (out.empty() ? "" : ", ") + (title != metadata.end() ? title->second : fileStem(path));
  }
  return out;
}

}  // namespace sinter::tools

#include "core/model_family_detect.h"

#include "core/ascii_text.h"
#include "core/family_table.h"
#include "core/pickle_file.h"

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace sinter {

namespace {
constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;  // the safetensors library's own limit

}  // namespace

std::vector<std::string> readSafetensorsKeys(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  unsigned char lenBytes[9] = {};  // the header's length, and its first byte
  if (!in.read(reinterpret_cast<char*>(lenBytes), 8))
    throw std::runtime_error("'" + path + "' is too short to be a safetensors file");
  const std::size_t head = in.read(reinterpret_cast<char*>(lenBytes + 8), 1) ? 9 : 8;
  in.clear();
  in.seekg(8);
  if (const std::optional<std::string> pickle = pickleCheckpointProblem(lenBytes, head)) throw std::runtime_error("'" + path + "' is " + *pickle);
  std::uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | lenBytes[i];
  if (len == 0 || len > kMaxHeaderBytes)
    throw std::runtime_error("'" + path + "' is not a safetensors file (header length " + std::to_string(len) + ")");
  std::string header(len, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(len)))
    throw std::runtime_error("'" + path + "' is truncated: its header is shorter than it says");
  nlohmann::json j = nlohmann::json::parse(header, nullptr, false);
  if (!j.is_object()) throw std::runtime_error("'" + path + "' has a safetensors header that is not a JSON object");
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "__metadata__") keys.push_back(it.key());
  return keys;
}

bool hasKohyaLoraModules(const std::vector<std::string>& keys) {
  for (const std::string& key : keys)
    if (startsWith(key, "lora_unet_") || startsWith(key, "lora_te")) return true;
  return false;
}

std::optional<Family> detectFamilyFromKeys(const std::vector<std::string>& rawKeys) {
  bool sd = false, openClipTe = false;
  for (std::string k : rawKeys) {
    // Checkpoints saved from compiled Python models carry "_orig_mod."; it is not part of the name.
    for (auto p = k.find("_orig_mod."); p != std::string::npos; p = k.find("_orig_mod.")) k.erase(p, 10);
    if (startsWith(k, "conditioner.")) return Family::SDXL;
    if (startsWith(k, "double_blocks.") || startsWith(k, "model.diffusion_model.double_blocks.")) return Family::FLUX;
    // SD 3.x's MMDiT (SAI's single files, and the bare MMDiT), before SD 1.x/2.x's generic prefix.
    if (startsWith(k, "joint_blocks.") || startsWith(k, "model.diffusion_model.joint_blocks.")) return Family::SD3;
    if (startsWith(k, "model.diffusion_model.")) sd = true;
    if (startsWith(k, "cond_stage_model.model.")) openClipTe = true;
  }
  if (!sd) return std::nullopt;
  return openClipTe ? Family::SD2 : Family::SD15;
}

std::optional<Family> detectModelFamily(const std::string& checkpointPath) {
  return detectFamilyFromKeys(readSafetensorsKeys(checkpointPath));
}

std::optional<LoraFileFamily> detectLoraFileFamily(const std::vector<std::string>& keys,
                                                   const std::map<std::string, std::string>& metadata, std::int64_t textEncoderWidth) {
  const auto meta = [&](const char* key) {
    const auto it = metadata.find(key);
    return it == metadata.end() ? std::string() : it->second;
  };
  // ss_network_module names the family where only one uses the module (networks.lora is three's).
  if (const std::string module = meta("ss_network_module"); !module.empty()) {
    std::vector<Family> users;
    for (const FamilyRow& row : familyTable())
      if (module == row.loraModule) users.push_back(row.family);
    if (users.size() == 1) return LoraFileFamily{users.front(), "ss_network_module = " + module};
  }
  // sai_model_spec's architectures (a LoRA's with "/lora" after them).
  if (const std::string arch = meta("modelspec.architecture"); !arch.empty()) {
    static const std::vector<std::pair<const char*, Family>> architectures = {
        {"stable-diffusion-3", Family::SD3}, {"stable-diffusion-xl", Family::SDXL}, {"flux-1", Family::FLUX},
        {"chroma", Family::FLUX},           {"stable-diffusion-v2", Family::SD2},  {"stable-diffusion-v1", Family::SD15}};
    for (const auto& [prefix, family] : architectures)
      if (startsWith(arch, prefix)) return LoraFileFamily{family, "modelspec.architecture = " + arch};
  }
  // train_network's model_version: sdxl_base_v1-0, flux1 / chroma, sd_v1 / sd_v2..., and for SD 3
  // the MMDiT's model_type (medium, 5-medium, 5-large).
  if (const std::string version = meta("ss_base_model_version"); !version.empty()) {
    static const std::vector<std::pair<const char*, Family>> versions = {
        {"sdxl", Family::SDXL}, {"flux", Family::FLUX}, {"chroma", Family::FLUX}, {"sd_v2", Family::SD2}, {"sd_v1", Family::SD15},
        {"sd3", Family::SD3},   {"medium", Family::SD3}, {"5-medium", Family::SD3}, {"5-large", Family::SD3}};
    for (const auto& [prefix, family] : versions)
      if (startsWith(version, prefix)) return LoraFileFamily{family, "ss_base_model_version = " + version};
  }
  // The kohya module names each family's networks give (and other trainers' FLUX names).
  const auto any = [&](std::initializer_list<const char*> marks, bool inside = false) -> std::string {
    for (const std::string& key : keys)
      for (const char* mark : marks)
        if (inside ? key.find(mark) != std::string::npos : startsWith(key, mark)) return std::string(mark) + "*";
    return "";
  };
  const auto byNames = [](Family family, const std::string& mark) { return LoraFileFamily{family, "its module names (" + mark + ")"}; };
  if (const std::string m = any({"lora_unet_joint_blocks_", "lora_unet_context_embedder", "lora_unet_x_embedder_"}); !m.empty())
    return byNames(Family::SD3, m);
  if (const std::string m = any({"lora_unet_double_blocks_", "lora_unet_single_blocks_"}); !m.empty()) return byNames(Family::FLUX, m);
  if (const std::string m = any({"single_transformer_blocks"}, true); !m.empty()) return byNames(Family::FLUX, m);
  if (const std::string m = any({"lora_unet_input_blocks_", "lora_unet_middle_block_", "lora_unet_output_blocks_", "lora_unet_label_emb_"});
      !m.empty())
    return byNames(Family::SDXL, m);
  const std::string sd = any({"lora_unet_down_blocks_", "lora_unet_mid_block_", "lora_unet_up_blocks_", "lora_te_"});
  if (!sd.empty() && !any({"lora_te2_"}).empty()) return byNames(Family::SDXL, "lora_te2_* beside " + sd);  // OneTrainer's SDXL
  if (!sd.empty()) {
    if (textEncoderWidth == 1024) return byNames(Family::SD2, sd + ", lora_te_* 1024 wide");
    if (textEncoderWidth > 0) return byNames(Family::SD15, sd + ", lora_te_* " + std::to_string(textEncoderWidth) + " wide");
    if (meta("ss_v2") == "True") return LoraFileFamily{Family::SD2, "its module names (" + sd + ") and ss_v2 = True"};
    return byNames(Family::SD15, sd + "; SD 2.x's U-Net has the same names, and no text encoder module tells them apart");
  }
  return std::nullopt;
}

}  // namespace sinter

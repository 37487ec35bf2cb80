#include "core/model_family_detect.h"

#include "core/ascii_text.h"
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

}  // namespace sinter

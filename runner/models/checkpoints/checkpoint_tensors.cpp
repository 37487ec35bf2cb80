#include "models/checkpoints/checkpoint_tensors.h"

#include <sstream>

#include "io/safetensors.h"

namespace sinter::models {

namespace {

// The same elements, differing only by trailing 1-sized dims ([c, c] vs [c, c, 1, 1]).
bool sameUpToTrailingOnes(std::vector<int64_t> a, std::vector<int64_t> b) {
  while (!a.empty() && a.back() == 1 && a.size() > 1) a.pop_back();
  while (!b.empty() && b.back() == 1 && b.size() > 1) b.pop_back();
  return a == b;
}

std::string shapeText(const std::vector<int64_t>& s) { return c10::str(c10::IntArrayRef(s)); }

}  // namespace

void collectCheckpointErrors(const std::vector<std::function<void()>>& steps) {
  std::string messages;
  for (const auto& step : steps) {
    try {
      step();
    } catch (const CheckpointError& e) {
      messages += (messages.empty() ? "" : "\n") + std::string(e.what());
    }
  }
  if (!messages.empty()) throw CheckpointError(messages);
}

std::string describeCheckpointFamily(const io::SafetensorsFile& file) {
  if (file.hasKeyStartingWith("model.diffusion_model.joint_blocks.") || file.hasKeyStartingWith("joint_blocks."))
    return "this looks like an SD 3.x checkpoint (it has joint_blocks.* keys)";
  if (file.has("double_blocks.0.img_attn.qkv.weight") || file.hasKeyStartingWith("double_blocks.") ||
      file.hasKeyStartingWith("model.diffusion_model.double_blocks."))
    return "this looks like a FLUX checkpoint (it has double_blocks.* keys)";
  if (file.hasKeyStartingWith("cond_stage_model."))
    return "this looks like an SD 1.x/2.x checkpoint (it has cond_stage_model.* keys, no conditioner.embedders.*)";
  if (file.hasKeyStartingWith("lora_unet_") || file.hasKeyStartingWith("lora_te"))
    return "this looks like a LoRA file, not a base model checkpoint";
  if (file.hasKeyStartingWith("down_blocks.") || file.hasKeyStartingWith("unet.down_blocks."))
    return "this looks like a diffusers-layout model; Sinter reads the original single-file layout";
  return "";
}

std::set<int64_t> indexedBlocks(const io::SafetensorsFile& file, const std::string& prefix, const std::string& blocks,
                                const std::string& suffix) {
  const std::string start = prefix + blocks + ".";
  std::set<int64_t> indices;
  for (const std::string& key : file.keys()) {
    if (key.rfind(start, 0) != 0 || key.size() < start.size() + suffix.size() ||
        key.compare(key.size() - suffix.size(), suffix.size(), suffix))
      continue;
    const std::string index = key.substr(start.size(), key.find('.', start.size()) - start.size());
    if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) continue;
    indices.insert(std::stoll(index));
  }
  return indices;
}

int64_t countIndexedBlocks(const io::SafetensorsFile& file, const std::string& prefix, const std::string& blocks,
                           const std::string& suffix) {
  const std::set<int64_t> indices = indexedBlocks(file, prefix, blocks, suffix);
  return indices.empty() ? 0 : *indices.rbegin() + 1;
}

std::string dtypeRefusal(const std::string& key, const std::string& storedDtype, const torch::Tensor& target) {
  const std::optional<torch::ScalarType> stored = io::safetensorsDtypeToTorch(storedDtype);
  if (!stored || !target.is_floating_point() || c10::isFloatingType(*stored)) return "";
  return key + " is stored as " + storedDtype + ", which cannot hold the model's " + io::torchToSafetensorsDtype(target.scalar_type()) +
         " values there";
}

std::vector<int64_t> requireShape(const io::SafetensorsFile& file, const std::string& prefix, const std::string& key,
                                  const std::string& modelName) {
  if (!file.has(prefix + key)) {
    std::string message = file.path() + ": not an " + modelName + " checkpoint: missing " + prefix + key;
    const std::string family = describeCheckpointFamily(file);
    if (!family.empty()) message += " (" + family + ")";
    throw CheckpointError(message);
  }
  return file.info(prefix + key).shape;
}

void loadModuleFromCheckpoint(torch::nn::Module& module, const io::SafetensorsFile& file, const std::string& prefix,
                              const std::string& modelName) {
  std::vector<std::pair<std::string, torch::Tensor>> targets;
  for (const auto& item : module.named_parameters(true)) targets.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers(true)) targets.emplace_back(item.key(), item.value());

  std::vector<std::string> missing, misshapen, wrongDtype;
  for (const auto& [name, target] : targets) {
    const std::string key = prefix + name;
    if (!file.has(key)) {
      missing.push_back(key);
      continue;
    }
    const io::TensorInfo& info = file.info(key);
    const std::vector<int64_t> expected = target.sizes().vec();
    if (info.shape != expected && !sameUpToTrailingOnes(info.shape, expected))
      misshapen.push_back(key + " is " + shapeText(info.shape) + ", expected " + shapeText(expected));
    else if (!io::safetensorsDtypeToTorch(info.dtype))
      misshapen.push_back(key + " has dtype " + info.dtype + ", which this libtorch cannot read");
    else if (std::string refusal = dtypeRefusal(key, info.dtype, target); !refusal.empty())
      wrongDtype.push_back(refusal);
  }
  if (!missing.empty() || !misshapen.empty() || !wrongDtype.empty()) {
    std::ostringstream out;
    out << file.path() << ": does not hold the " << modelName << " expected under \"" << prefix << "\"";
    const std::string family = describeCheckpointFamily(file);
    if (!family.empty()) out << "; " << family;
    constexpr size_t kListed = 20;
    if (!missing.empty()) {
      out << "\n  " << missing.size() << " missing key(s):";
      for (size_t i = 0; i < missing.size() && i < kListed; ++i) out << "\n    " << missing[i];
      if (missing.size() > kListed) out << "\n    ... and " << missing.size() - kListed << " more";
    }
    if (!misshapen.empty()) {
      out << "\n  " << misshapen.size() << " wrong shape(s):";
      for (size_t i = 0; i < misshapen.size() && i < kListed; ++i) out << "\n    " << misshapen[i];
      if (misshapen.size() > kListed) out << "\n    ... and " << misshapen.size() - kListed << " more";
    }
    if (!wrongDtype.empty()) {
      out << "\n  " << wrongDtype.size() << " wrong dtype(s):";
      for (size_t i = 0; i < wrongDtype.size() && i < kListed; ++i) out << "\n    " << wrongDtype[i];
      if (wrongDtype.size() > kListed) out << "\n    ... and " << wrongDtype.size() - kListed << " more";
    }
    throw CheckpointError(out.str());
  }
  torch::NoGradGuard noGrad;
  for (auto& [name, target] : targets) {
    torch::Tensor source = file.tensor(prefix + name);
    target.copy_(source.reshape(target.sizes()));
  }
}

std::vector<std::pair<std::string, torch::Tensor>> moduleCheckpointTensors(const torch::nn::Module& module,
                                                                           const std::string& prefix) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& item : module.named_parameters(true)) out.emplace_back(prefix + item.key(), item.value());
  for (const auto& item : module.named_buffers(true)) out.emplace_back(prefix + item.key(), item.value());
  return out;
}

}  // namespace sinter::models

#include "tools/lora_merge.h"

#include <cmath>
#include <set>
#include <stdexcept>

#include "network/python_format.h"

namespace sinter::tools {

namespace {

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The weight key's bias: "...weight" → "...bias" (OpenCLIP's in_proj_weight → in_proj_bias).
std::string biasKeyOf(const std::string& weightKey) {
  return endsWith(weightKey, "weight") ? weightKey.substr(0, weightKey.size() - 6) + "bias" : "";
}

// "8", "Dynamic": one value for all modules, as merge_lora_models writes ss_network_dim/alpha.
template <typename T, typename Text>
std::string sameOrDynamic(const std::map<std::string, T>& values, Text text) {
  std::set<T> distinct;
  for (const auto& kv : values) distinct.insert(kv.second);
  if (distinct.size() == 1) return text(*distinct.begin());
  return distinct.empty() ? "None" : "Dynamic";
}

}  // namespace

MergedLora mergeLoraFiles(const std::vector<LoraToMerge>& loras, torch::Dtype mergeDtype, bool concat, bool shuffle) {
  torch::NoGradGuard noGrad;
  std::map<std::string, double> baseAlphas;  // the first file's alpha per module
  std::map<std::string, std::string> baseAlphaTexts;  // as Python prints it: a float read, or the rank (an int)
  std::map<std::string, int64_t> baseDims;
  std::map<std::string, torch::Tensor> merged;
  for (const LoraToMerge& lora : loras) {
    // This file's alpha and rank per module; alpha defaults to the rank.
    std::map<std::string, double> alphas;
    std::map<std::string, int64_t> dims;
    for (const auto& [key, tensor] : lora.tensors) {
      const size_t dot = key.find('.');
      const std::string module = key.substr(0, dot), name = dot == std::string::npos ? "" : key.substr(dot + 1);
      if (name == "alpha") {
        alphas[module] = tensor.to(torch::kFloat64).item<double>();
      } else if (name == "lora_down.weight") {
        dims[module] = tensor.size(0);
      } else if (name != "lora_up.weight") {
        throw std::invalid_argument(lora.path + ": '" + key + "' is no lora_down / lora_up / alpha tensor; LoRAs merge into one " +
                                    "LoRA by summing their factors, which LyCORIS modules have not (svd_merge_lora, or merging " +
                                    "into a checkpoint with --sd_model, takes them)");
      }
    }
    for (const auto& [module, alpha] : alphas) baseAlphaTexts.emplace(module, network::pythonFloatRepr(alpha));
    for (const auto& [module, dim] : dims) {
      if (!alphas.count(module)) alphas[module] = static_cast<double>(dim);
      baseAlphaTexts.emplace(module, std::to_string(dim));
      baseDims.emplace(module, dim);
    }
    for (const auto& [module, alpha] : alphas) baseAlphas.emplace(module, alpha);
    for (const auto& [key, tensor] : lora.tensors) {
      const size_t dot = key.find('.');
      const std::string module = key.substr(0, dot), name = key.substr(dot + 1);
      if (name == "alpha") continue;
      const bool up = name == "lora_up.weight";
      const double scale0 = std::sqrt(alphas.at(module) / baseAlphas.at(module)) * lora.ratio;
      double scale = up ? std::abs(scale0) : scale0;  // a negative ratio flips lora_down only
      // sdxl_merge_lora.py weighs both factors by the block's weight (the product takes its square).
      if (lora.lbw) scale *= lora.lbw->factor(module, true);
      const torch::Tensor value = tensor.to(mergeDtype) * scale;
      auto it = merged.find(key);
      if (it == merged.end()) {
        merged.emplace(key, value);
      } else if (concat) {
        it->second = torch::cat({it->second, value}, up ? 1 : 0);
      } else if (it->second.sizes() != value.sizes()) {
        throw std::invalid_argument(lora.path + ": " + key + " is " + c10::str(value.sizes()) + " where the files before have " +
                                    c10::str(it->second.sizes()) + "; LoRAs of different ranks merge with --concat (the ranks " +
                                    "add up) or svd_merge_lora (back to one rank)");
      } else {
        it->second = it->second + value;
      }
    }
  }
  MergedLora out;
  for (const auto& [module, alpha] : baseAlphas) {
    merged[module + ".alpha"] = torch::tensor(alpha, torch::kFloat32).to(mergeDtype);
    const std::string down = module + ".lora_down.weight", up = module + ".lora_up.weight";
    if (shuffle && merged.count(down) && merged.count(up)) {
      const torch::Tensor perm = torch::randperm(merged[down].size(0));
      merged[down] = merged[down].index_select(0, perm);
      merged[up] = merged[up].index_select(1, perm);
    }
  }
  for (auto& [key, tensor] : merged) out.tensors.emplace_back(key, tensor.contiguous());
  out.dims = sameOrDynamic(baseDims, [](int64_t d) { return std::to_string(d); });
  out.alphas = sameOrDynamic(baseAlphas, [&](double a) {
    for (const auto& [module, alpha] : baseAlphas)
      if (alpha == a) return baseAlphaTexts.at(module);
    return network::pythonFloatRepr(a);
  });
  return out;
}

CheckpointMergePlan planCheckpointMerge(const std::map<std::string, network::LoraWeightSlot>& slots,
                                        const std::vector<LoraModulesToMerge>& loras) {
  CheckpointMergePlan plan;
  for (size_t i = 0; i < loras.size(); ++i) {
    for (const auto& [name, module] : *loras[i].modules) {
      const auto slot = slots.find(name);
      if (slot == slots.end()) continue;
      const double ratio = loras[i].ratio * (loras[i].lbw ? loras[i].lbw->factor(name, true) : 1.0);
      plan.byKey[slot->second.key].push_back({&module, ratio, slot->second, false});
      if (module.algo == models::LycorisAlgo::Full && module.tensors.has("diff_b")) {
        const std::string bias = biasKeyOf(slot->second.key);
        if (bias.empty()) throw std::invalid_argument(name + ": its diff_b has no bias to go to (" + slot->second.key + ")");
        plan.byKey[bias].push_back({&module, ratio, slot->second, true});
      }
      plan.matched.insert({i, name});
    }
  }
  return plan;
}

torch::Tensor mergedTensor(const io::SafetensorsFile& file, const std::string& key, const std::vector<LoraAddition>& additions,
                           torch::Dtype mergeDtype, const torch::Device& device) {
  torch::NoGradGuard noGrad;
  torch::Tensor value = file.tensor(key).to(device, mergeDtype);
  for (const LoraAddition& a : additions) {
    const int64_t rows = a.slot.rows < 0 ? value.size(0) : a.slot.rows;
    torch::Tensor target = value.narrow(0, a.slot.rowOffset, rows);
    if (a.bias) {
      const torch::Tensor diff = a.module->tensors.at("diff_b").to(device, mergeDtype);
      if (diff.numel() != target.numel())
        throw std::invalid_argument(a.module->name + ": diff_b has " + std::to_string(diff.numel()) + " values for " + key + "'s " +
                                    std::to_string(target.numel()));
      target.add_(diff.reshape(target.sizes()) * a.ratio);
      continue;
    }
    LoraFileModule onDevice = *a.module;
    for (auto& [name, tensor] : onDevice.tensors.byName) tensor = tensor.to(device);
    target.add_(loraModuleDelta(onDevice, a.slot.shape, a.ratio, target).to(mergeDtype));
  }
  return value;
}

void writeMergedCheckpoint(const io::SafetensorsFile& file, const std::string& out, const CheckpointMergePlan& plan,
                           torch::Dtype mergeDtype, torch::Dtype saveDtype, const torch::Device& device,
                           const std::map<std::string, std::string>& metadata) {
  std::vector<io::TensorDeclaration> entries;
  const std::vector<std::string> keys = file.keys();
  for (const std::string& key : keys) {
    const io::TensorInfo& info = file.info(key);
    const std::optional<torch::ScalarType> stored = io::safetensorsDtypeToTorch(info.dtype);
    if (!stored) throw io::SafetensorsError(file.path(), key + " has dtype " + info.dtype + ", which this libtorch cannot read");
    entries.push_back({key, c10::isFloatingType(*stored) ? saveDtype : *stored, info.shape});
  }
  io::writeSafetensorsStreaming(out, entries, metadata, [&](size_t i) {
    const std::string& key = entries[i].key;
    if (!c10::isFloatingType(entries[i].dtype)) return file.tensor(key);
    const auto additions = plan.byKey.find(key);
    if (additions == plan.byKey.end()) return file.tensor(key).to(saveDtype);
    return mergedTensor(file, key, additions->second, mergeDtype, device).to(torch::kCPU, saveDtype);
  });
}

}  // namespace sinter::tools

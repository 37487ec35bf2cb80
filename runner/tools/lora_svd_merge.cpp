#include "tools/lora_svd_merge.h"

#include <map>
#include <stdexcept>

#include "tools/low_rank_factors.h"

namespace sinter::tools {

namespace {

// The weight shape a lora_down/lora_up pair stands for: [out, in] or [out, in, kh, kw].
std::vector<int64_t> weightShapeOf(const LoraFileModule& m) {
  const torch::Tensor& down = m.tensors.at("lora_down.weight");
  const torch::Tensor& up = m.tensors.at("lora_up.weight");
  std::vector<int64_t> shape{up.size(0), down.size(1)};
  if (down.dim() == 4) shape.insert(shape.end(), {down.size(2), down.size(3)});
  return shape;
}

}  // namespace

std::vector<std::pair<std::string, torch::Tensor>> svdMergeLoras(const std::vector<LoraToMerge>& loras, const SvdMergeOptions& options) {
  torch::NoGradGuard noGrad;
  std::map<std::string, torch::Tensor> sums;  // the summed delta per module
  for (const LoraToMerge& lora : loras) {
    for (const auto& [name, module] : readLoraFileModules(lora.tensors, lora.path, options.mergeDtype)) {
      if (!module.isPlainLora())
        throw std::invalid_argument(lora.path + ": module " + name + " is LyCORIS " + models::lycorisAlgoName(module.algo) +
                                    (module.doraScale() ? " with DoRA" : "") +
                                    "; svd_merge_lora merges lora_down/lora_up modules (merge it into a checkpoint with merge_lora "
                                    "--sd_model)");
      LoraFileModule onDevice = module;
      for (auto& [key, tensor] : onDevice.tensors.byName) tensor = tensor.to(options.device);
      const std::vector<int64_t> shape = weightShapeOf(onDevice);
      const torch::Tensor delta = loraModuleDelta(onDevice, shape, lora.ratio, torch::Tensor());
      auto it = sums.find(name);
      if (it == sums.end()) {
        sums.emplace(name, delta);
      } else if (it->second.sizes() != delta.sizes()) {
        throw std::invalid_argument(lora.path + ": module " + name + " stands for a weight of " + c10::str(delta.sizes()) +
                                    " where the files before have " + c10::str(it->second.sizes()));
      } else {
        it->second = it->second + delta;
      }
    }
  }
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& [name, delta] : sums) {
    const bool conv3x3 = delta.dim() == 4 && !(delta.size(2) == 1 && delta.size(3) == 1);
    const LowRankFactors f = lowRankFactors(delta, conv3x3 ? options.newConvRank : options.newRank, options.clampQuantile);
    out.emplace_back(name + ".lora_up.weight", f.up.to(torch::kCPU));
    out.emplace_back(name + ".lora_down.weight", f.down.to(torch::kCPU));
    out.emplace_back(name + ".alpha", torch::tensor(f.down.size(0), torch::kInt64));  // torch.tensor(module_new_rank)
  }
  return out;
}

}  // namespace sinter::tools

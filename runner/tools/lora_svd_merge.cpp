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
  // Each module's Σ ratio · (up·down) · scale, summed in the merge dtype in the files' order and
  // factored by the full SVD of the sum, as svd_merge_lora.py does: its clamp (± a quantile of the
  // factors' values) is not sign-invariant, so only the same SVD of the same matrix gives its factors
  // (an SVD of the stacked factors is exact too, but picks other signs; tests/gpu/RESULTS.md).
  struct Sum {
    std::vector<int64_t> shape;  // of the weight
    torch::Tensor weight;        // [out, in·kh·kw]
  };
  std::map<std::string, Sum> sums;
  std::vector<std::string> order;
  for (const LoraToMerge& lora : loras) {
    for (const auto& [name, module] : readLoraFileModules(lora.tensors, lora.path, options.mergeDtype)) {
      if (!module.isPlainLora())
        throw std::invalid_argument(lora.path + ": module " + name + " is LyCORIS " + models::lycorisAlgoName(module.algo) +
                                    (module.doraScale() ? " with DoRA" : "") +
                                    "; svd_merge_lora merges lora_down/lora_up modules (merge it into a checkpoint with merge_lora "
                                    "--sd_model)");
      const std::vector<int64_t> shape = weightShapeOf(module);
      const torch::Tensor down = module.tensors.at("lora_down.weight").to(options.device, options.mergeDtype);
      const torch::Tensor up = module.tensors.at("lora_up.weight").to(options.device, options.mergeDtype);
      const int64_t rank = down.size(0);
      auto [it, first] = sums.try_emplace(name);
      Sum& sum = it->second;
      if (first) {
        order.push_back(name);
        sum.shape = shape;
        sum.weight = torch::zeros({shape[0], down.numel() / rank}, down.options());
      }
      if (sum.shape != shape)
        throw std::invalid_argument(lora.path + ": module " + name + " stands for a weight of " + c10::str(c10::IntArrayRef(shape)) +
                                    " where the files before have " + c10::str(c10::IntArrayRef(sum.shape)));
      const double scale = models::lycorisScaleOf(module.algo, module.tensors) *
                           (lora.lbw ? lora.lbw->factor(name, lora.lbw->sdxl) : 1.0);  // format_lbws' is_sdxl
      sum.weight += lora.ratio * torch::matmul(up.reshape({shape[0], rank}), down.reshape({rank, -1})) * scale;
    }
  }
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const std::string& name : order) {
    const Sum& sum = sums.at(name);
    const bool conv3x3 = sum.shape.size() == 4 && !(sum.shape[2] == 1 && sum.shape[3] == 1);
    const LowRankFactors f =
        lowRankFactors(sum.weight.reshape(sum.shape), conv3x3 ? options.newConvRank : options.newRank, options.clampQuantile);
    out.emplace_back(name + ".lora_up.weight", f.up.to(torch::kCPU, options.mergeDtype));
    out.emplace_back(name + ".lora_down.weight", f.down.to(torch::kCPU, options.mergeDtype));
    out.emplace_back(name + ".alpha", torch::tensor(f.down.size(0), torch::kInt64));  // torch.tensor(module_new_rank)
  }
  return out;
}

}  // namespace sinter::tools

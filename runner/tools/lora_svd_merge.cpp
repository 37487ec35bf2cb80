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
  // Σ ratio · scale · up·down = [ratio·scale·up₁ | ...]·[down₁; ...]: each module's sum as two
  // stacked factors, whose SVD (productSvd) is the sum's, exactly and without forming it.
  struct Stacked {
    std::vector<int64_t> shape;  // of the weight
    std::vector<torch::Tensor> ups, downs;
  };
  std::map<std::string, Stacked> sums;
  for (const LoraToMerge& lora : loras) {
    for (const auto& [name, module] : readLoraFileModules(lora.tensors, lora.path, options.mergeDtype)) {
      if (!module.isPlainLora())
        throw std::invalid_argument(lora.path + ": module " + name + " is LyCORIS " + models::lycorisAlgoName(module.algo) +
                                    (module.doraScale() ? " with DoRA" : "") +
                                    "; svd_merge_lora merges lora_down/lora_up modules (merge it into a checkpoint with merge_lora "
                                    "--sd_model)");
      const std::vector<int64_t> shape = weightShapeOf(module);
      const torch::Tensor& down = module.tensors.at("lora_down.weight");
      const torch::Tensor& up = module.tensors.at("lora_up.weight");
      const int64_t rank = down.size(0);
      Stacked& sum = sums[name];
      if (sum.shape.empty()) sum.shape = shape;
      if (sum.shape != shape)
        throw std::invalid_argument(lora.path + ": module " + name + " stands for a weight of " + c10::str(c10::IntArrayRef(shape)) +
                                    " where the files before have " + c10::str(c10::IntArrayRef(sum.shape)));
      const double scale = models::lycorisScaleOf(module.algo, module.tensors) * lora.ratio *
                           (lora.lbw ? lora.lbw->factor(name, lora.lbw->sdxl) : 1.0);  // format_lbws' is_sdxl
      sum.ups.push_back(up.to(options.device).reshape({shape[0], rank}) * scale);
      sum.downs.push_back(down.to(options.device).reshape({rank, -1}));
    }
  }
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& [name, sum] : sums) {
    const bool conv3x3 = sum.shape.size() == 4 && !(sum.shape[2] == 1 && sum.shape[3] == 1);
    const ProductSvd svd = productSvd(torch::cat(sum.ups, 1), torch::cat(sum.downs, 0));
    const LowRankFactors f = truncatedFactors(svd, sum.shape, conv3x3 ? options.newConvRank : options.newRank, options.clampQuantile);
    out.emplace_back(name + ".lora_up.weight", f.up.to(torch::kCPU, options.mergeDtype));
    out.emplace_back(name + ".lora_down.weight", f.down.to(torch::kCPU, options.mergeDtype));
    out.emplace_back(name + ".alpha", torch::tensor(f.down.size(0), torch::kInt64));  // torch.tensor(module_new_rank)
  }
  return out;
}

}  // namespace sinter::tools

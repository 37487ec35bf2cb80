#include "tools/lora_resize.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "tools/low_rank_factors.h"

namespace sinter::tools {

namespace {

constexpr double kZeroSingularValue = 1e-6;  // resize_lora.py's MIN_SV

// The index of the first element of the ascending `sums` that is >= target (torch.searchsorted's).
int64_t firstAtLeast(const torch::Tensor& sums, double target) {
  const auto a = sums.accessor<double, 1>();
  int64_t i = 0;
  while (i < a.size(0) && a[i] < target) ++i;
  return i;
}

// A LoRA module's two factors, by the key naming conventions sd-scripts' resize reads.
struct FactorNames {
  const char* down;
  const char* up;
};
constexpr FactorNames kFactorNames[] = {{"lora_down", "lora_up"}, {"lora_A", "lora_B"}, {"down", "up"}};

struct ModuleKeys {
  std::string prefix, downKey, upKey;
};

// The module a key is the down factor of: "<prefix>.<down>.weight" or "<prefix>.<down>".
std::optional<ModuleKeys> downFactorOf(const std::string& key) {
  for (const FactorNames& f : kFactorNames) {
    for (const std::string suffix : {std::string(".") + f.down + ".weight", std::string(".") + f.down}) {
      if (key.size() <= suffix.size() || key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      const std::string prefix = key.substr(0, key.size() - suffix.size());
      const std::string weight = suffix.size() > std::string(f.down).size() + 1 ? ".weight" : "";
      return ModuleKeys{prefix, key, prefix + "." + f.up + weight};
    }
  }
  return std::nullopt;
}

}  // namespace

DynamicRank parseDynamicRank(const std::string& name) {
  if (name.empty()) return DynamicRank::Fixed;
  if (name == "sv_ratio") return DynamicRank::SvRatio;
  if (name == "sv_fro") return DynamicRank::SvFro;
  if (name == "sv_cumulative") return DynamicRank::SvCumulative;
  throw std::invalid_argument("--dynamic_method: '" + name + "' is none of sv_ratio, sv_fro, sv_cumulative");
}

int64_t chooseRank(const torch::Tensor& singularValues, int64_t fullLength, int64_t maxRank, DynamicRank method, double dynamicParam) {
  const torch::Tensor s = singularValues.to(torch::kCPU, torch::kDouble);
  const int64_t n = s.size(0);
  // index_sv_*: a position among the full SVD's fullLength values, then max(1, min(index, len - 1)).
  const auto clampIndex = [fullLength](int64_t i) { return std::max<int64_t>(1, std::min<int64_t>(i, fullLength - 1)); };
  // searchsorted over the full cumulative shares: past the nonzero values they stay at their total.
  const auto reached = [n, fullLength](const torch::Tensor& shares, double target) {
    const int64_t i = firstAtLeast(shares, target);
    return i < n ? i : fullLength;
  };
  int64_t rank = maxRank;
  switch (method) {
    case DynamicRank::Fixed: break;
    case DynamicRank::SvRatio:  // index = the count of S > S[0] / param
      rank = clampIndex((s > s[0].item<double>() / dynamicParam).sum().item<int64_t>()) + 1;
      break;
    case DynamicRank::SvCumulative:
      rank = clampIndex(reached(torch::cumsum(s, 0) / s.sum().item<double>(), dynamicParam) + 1) + 1;
      break;
    case DynamicRank::SvFro: {
      const torch::Tensor squares = s.pow(2);
      rank = clampIndex(reached(torch::cumsum(squares, 0) / squares.sum().item<double>(), dynamicParam * dynamicParam) + 1) + 1;
      break;
    }
  }
  if (s[0].item<double>() <= kZeroSingularValue) return 1;
  return std::min(rank, maxRank);
}

ResizeResult resizeLora(const std::map<std::string, torch::Tensor>& tensors, const ResizeOptions& options) {
  torch::NoGradGuard noGrad;
  ResizeResult result;
  std::map<std::string, torch::Tensor> out(tensors.begin(), tensors.end());
  std::set<std::string> used;  // keys that belong to a resized module
  for (const auto& [key, downTensor] : tensors) {
    const std::optional<ModuleKeys> m = downFactorOf(key);
    if (!m) continue;
    const auto up = tensors.find(m->upKey);
    if (up == tensors.end()) continue;  // as sd-scripts: a down factor without its up is left alone
    const torch::Tensor& upTensor = up->second;
    const bool conv = downTensor.dim() == 4;
    const int64_t oldRank = downTensor.size(0);
    if (upTensor.dim() < 2 || upTensor.size(1) != oldRank)
      throw std::invalid_argument(m->prefix + ": " + m->upKey + " is " + c10::str(upTensor.sizes()) + ", which does not fit " +
                                  m->downKey + "'s " + c10::str(downTensor.sizes()) + " (rank " + std::to_string(oldRank) + ")");
    const auto alphaIt = tensors.find(m->prefix + ".alpha");
    const double scale = alphaIt == tensors.end() ? 1.0 : alphaIt->second.item<double>() / static_cast<double>(oldRank);

    const torch::Tensor down = downTensor.to(options.device, torch::kDouble).reshape({oldRank, -1});
    const torch::Tensor upMatrix = upTensor.to(options.device, torch::kDouble).reshape({upTensor.size(0), oldRank});
    const ProductSvd svd = productSvd(upMatrix, down);
    const torch::Tensor& s = svd.s;
    const int64_t cap = std::min<int64_t>(conv ? options.newConvRank : options.newRank, s.size(0));
    const int64_t fullLength = std::min(upMatrix.size(0), down.size(1));  // sd-scripts' SVD of the [out, in·k·k] weight
    const int64_t rank = chooseRank(s, fullLength, cap, options.dynamic, options.dynamicParam);
    const torch::Tensor kept = s.slice(0, 0, rank);
    ResizedModule r;
    r.name = m->prefix;
    r.oldRank = oldRank;
    r.newRank = rank;
    r.newAlpha = scale * static_cast<double>(rank);
    r.sumRetained = (kept.abs().sum() / s.abs().sum()).item<double>();
    r.froRetained = (kept.pow(2).sum().sqrt() / s.pow(2).sum().sqrt()).item<double>();
    r.maxRatio = (s[0] / s[rank - 1]).item<double>();

    const torch::Tensor newUp = svd.u.slice(1, 0, rank) * kept;  // U·diag(S)
    const torch::Tensor newDown = svd.vh.slice(0, 0, rank);      // Vᴴ
    std::vector<int64_t> downShape = downTensor.sizes().vec(), upShape = upTensor.sizes().vec();
    downShape[0] = rank;
    upShape[1] = rank;
    out[m->downKey] = newDown.reshape(downShape).to(torch::kCPU, options.saveDtype).contiguous();
    out[m->upKey] = newUp.reshape(upShape).to(torch::kCPU, options.saveDtype).contiguous();
    out[m->prefix + ".alpha"] = torch::tensor(r.newAlpha, torch::kFloat32).to(options.saveDtype);
    used.insert({m->downKey, m->upKey, m->prefix + ".alpha"});
    result.largestOldRank = std::max(result.largestOldRank, oldRank);
    result.lastNewAlpha = r.newAlpha;
    result.modules.push_back(std::move(r));
  }
  if (result.modules.empty())
    throw std::invalid_argument("no LoRA module to resize (no lora_down/lora_up, lora_A/lora_B or down/up pair among its " +
                                std::to_string(tensors.size()) + " tensors)");
  for (auto& [key, tensor] : out) {
    if (!used.count(key)) {
      result.copied.push_back(key);
      // resize_lora.py writes every floating tensor in the save precision.
      if (tensor.is_floating_point()) tensor = tensor.to(options.saveDtype);
    }
    result.tensors.emplace_back(key, tensor);
  }
  return result;
}

}  // namespace sinter::tools

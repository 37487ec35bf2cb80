#pragma once
// resize_lora: a LoRA's modules re-factored to a smaller rank, as sd-scripts' networks/resize_lora.py
// does it (the product up·down's SVD, its largest singular directions kept, alpha scaled so each
// module's scale alpha/rank is unchanged), and its dynamic rank rules. The SVD works on the two
// factors (QR of each, then the SVD of the small rank×rank core), which is exact at any size, so
// sd-scripts' svd_lowrank approximation for large matrices is not needed.
#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sinter::tools {

// sd-scripts' --dynamic_method: how a module's new rank follows from its singular values S
// (descending), --new_rank (or --new_conv_rank) capping it.
enum class DynamicRank { Fixed, SvRatio, SvFro, SvCumulative };
// "" (fixed), "sv_ratio", "sv_fro" or "sv_cumulative"; anything else: std::invalid_argument naming it.
DynamicRank parseDynamicRank(const std::string& name);

// The rank a module keeps, by resize_lora.py's rank_resize: for the dynamic methods the index its
// index_sv_* finds (the count of S > S[0]/param, or the first position where the cumulative share
// of Σ S, or of Σ S² against param², reaches param, plus one), kept within [1, fullLength - 1],
// plus one more, as sd-scripts counts; 1 for a zero matrix (S[0] <= 1e-6); capped at `maxRank`.
// `singularValues` are the product's nonzero ones, descending; `fullLength` is the length of
// sd-scripts' full SVD of the weight (min(out, in·kh·kw)), whose extra values are zeros.
int64_t chooseRank(const torch::Tensor& singularValues, int64_t fullLength, int64_t maxRank, DynamicRank method, double dynamicParam);

struct ResizeOptions {
  int64_t newRank = 4;       // --new_rank
  int64_t newConvRank = 4;   // --new_conv_rank (every 4-D module: 1x1 and 3x3 convolutions, as sd-scripts)
  DynamicRank dynamic = DynamicRank::Fixed;
  double dynamicParam = 0;
  torch::Dtype saveDtype = torch::kFloat32;
  torch::Device device = torch::kCPU;
};

// What a module kept (resize_lora.py --verbose prints the same).
struct ResizedModule {
  std::string name;      // the module's key prefix ("lora_unet_..._to_q")
  int64_t oldRank = 0, newRank = 0;
  double newAlpha = 0;
  double sumRetained = 0;  // Σ S[:new] / Σ S
  double froRetained = 0;  // ‖S[:new]‖ / ‖S‖
  double maxRatio = 0;     // S[0] / S[new-1]
};

struct ResizeResult {
  std::vector<std::pair<std::string, torch::Tensor>> tensors;  // the file's keys, resized modules replaced
  std::vector<ResizedModule> modules;
  std::vector<std::string> copied;  // keys of no LoRA module (LyCORIS tensors, DoRA scales), kept as they were
  int64_t largestOldRank = 0;
  double lastNewAlpha = 0;  // sd-scripts' ss_network_alpha for a fixed resize: the last module's
};

// Resizes every LoRA module of `tensors` (lora_down/lora_up as sd-scripts writes them, PEFT's
// lora_A/lora_B, ControlLoRA's down/up; each with its optional .alpha). std::invalid_argument when
// the file holds no such module, or a module's factors do not fit together (naming it).
ResizeResult resizeLora(const std::map<std::string, torch::Tensor>& tensors, const ResizeOptions& options);

}  // namespace sinter::tools

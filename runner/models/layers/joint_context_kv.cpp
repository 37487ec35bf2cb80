#include "models/layers/joint_context_kv.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "models/layers/joint_linear.h"

namespace sinter::models {

void JointContextKv::set(std::vector<std::shared_ptr<CrossAttentionImpl>> attentions, bool enabled) {
  // Equal widths side by side, so that their LoRA up projections batch as one run each.
  std::stable_sort(attentions.begin(), attentions.end(),
                   [](const auto& a, const auto& b) { return a->to_k->outFeatures() < b->to_k->outFeatures(); });
  attentions_ = std::move(attentions);
  const char* env = std::getenv("SINTER_JOINT_CONTEXT_KV");
  enabled_ = enabled && !attentions_.empty() && !(env && std::string(env) == "0");
}

bool JointContextKv::provide(const torch::Tensor& context) {
  if (!enabled_ || capturedSeparately_) return false;
  std::vector<LinearImpl*> linears;
  std::vector<int64_t> widths;
  for (const auto& a : attentions_) {
    linears.push_back(a->to_k.get());
    linears.push_back(a->to_v.get());
    widths.push_back(a->to_k->outFeatures());
    widths.push_back(a->to_v->outFeatures());
  }
  if (!jointLinearApplies(linears, context)) return false;
  const torch::Tensor joint = jointWeightRows(linears);
  if (!joint.defined()) {
    capturedSeparately_ = true;
    return false;
  }
  // One split: its backward is one concatenation of the parts' gradients (splitSharingGradient's
  // would be one copy per part, 140 in SDXL).
  const std::vector<torch::Tensor> parts = jointLinearForward(linears, joint, context).split_with_sizes(widths, -1);
  for (size_t i = 0; i < attentions_.size(); ++i) attentions_[i]->useContextKv(context, parts[2 * i], parts[2 * i + 1]);
  return true;
}

void JointContextKv::release() {
  for (const auto& a : attentions_) a->dropContextKv();
}

}  // namespace sinter::models

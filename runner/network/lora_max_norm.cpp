#include "network/lora_max_norm.h"

#include <stdexcept>

namespace sinter::network {

torch::Tensor loraWeightDelta(const models::LoraAdapter& a) {
  const torch::Tensor& down = a.down;
  const torch::Tensor& up = a.up;
  torch::Tensor delta;
  if (down.dim() == 2) {
    delta = torch::matmul(up, down);
  } else if (down.size(2) == 1 && down.size(3) == 1) {
    delta = torch::matmul(up.flatten(1), down.flatten(1)).unsqueeze(2).unsqueeze(3);
  } else {
    // A 3x3 lora_down [rank, in, kh, kw] followed by the 1x1 lora_up [out, rank, 1, 1]: the kernel
    // of their composition, as sd-scripts forms it with a convolution.
    delta = torch::conv2d(down.permute({1, 0, 2, 3}), up).permute({1, 0, 2, 3});
  }
  return delta * a.scale();
}

LoraMaxNorm::LoraMaxNorm(const LoraNetwork& network, double maxNorm) : maxNorm_(maxNorm) {
  if (!(maxNorm > 0.0)) throw std::invalid_argument("scale_weight_norms must be positive, got " + std::to_string(maxNorm));
  for (const LoraModule& m : network.modules()) adapters_.push_back(m.adapter);
  if (adapters_.empty()) throw std::invalid_argument("scale_weight_norms: the network has no modules");
  figures_ = torch::zeros({3}, adapters_.front()->down.options().dtype(torch::kFloat32));
}

void LoraMaxNorm::apply() {
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> norms;
  norms.reserve(adapters_.size());
  for (const auto& a : adapters_) norms.push_back(loraWeightDelta(*a).to(torch::kFloat32).norm());
  const torch::Tensor norm = torch::stack(norms);
  // sd-scripts: norm clamped below at half the limit, the desired norm at most the limit; the
  // ratio is exactly 1 for a module within the limit.
  const torch::Tensor clamped = torch::clamp_min(norm, maxNorm_ / 2);
  const torch::Tensor ratio = torch::clamp_max(clamped, maxNorm_) / clamped;
  const torch::Tensor factor = ratio.sqrt();
  for (size_t i = 0; i < adapters_.size(); ++i) {
    const torch::Tensor f = factor[static_cast<int64_t>(i)];
    adapters_[i]->up.mul_(f.to(adapters_[i]->up.scalar_type()));
    adapters_[i]->down.mul_(f.to(adapters_[i]->down.scalar_type()));
  }
  const torch::Tensor scaledNorm = norm * ratio;
  figures_.copy_(torch::stack({ratio.ne(1.0).sum().to(torch::kFloat32), scaledNorm.mean(), scaledNorm.max()}));
}

}  // namespace sinter::network

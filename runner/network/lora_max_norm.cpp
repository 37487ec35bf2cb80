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

namespace {

bool hasMaxNorm(models::LycorisAlgo algo) {
  return algo == models::LycorisAlgo::LoCon || algo == models::LycorisAlgo::LoHa || algo == models::LycorisAlgo::LoKr;
}

// The norm LyCORIS's apply_max_norm measures: the delta with alpha / dim and, except for LoKr
// (whose get_weight leaves it out), the scalar; without rank dropout or DoRA.
torch::Tensor lycorisNorm(const models::LycorisAdapter& a) {
  models::LycorisTensors t = a.tensors;
  if (a.algo == models::LycorisAlgo::LoKr && t.has("scalar")) {
    t.byName.erase("scalar");
    t.trained.erase("scalar");
  }
  return models::lycorisDelta(a.algo, a.shape, t, a.scale, {}).to(torch::kFloat32).norm();
}

// Scales a LyCORIS module's update by `ratio` (a 0-dim float32 tensor).
void scaleLycoris(models::LycorisAdapter& a, const torch::Tensor& ratio) {
  models::LycorisTensors& t = a.tensors;
  if (a.algo == models::LycorisAlgo::LoKr) {
    std::vector<std::string> factors;
    for (const std::string& name : t.names)
      if (t.trained.at(name) && name != "scalar" && name != "dora_scale") factors.push_back(name);
    const torch::Tensor f = ratio.pow(1.0 / static_cast<double>(factors.size()));
    for (const std::string& name : factors) t.at(name).mul_(f.to(t.at(name).scalar_type()));
    return;
  }
  const std::string target = t.has("scalar") ? "scalar" : models::lycorisScalarTarget(a.algo, t);
  t.at(target).mul_(ratio.to(t.at(target).scalar_type()));
}

}  // namespace

LoraMaxNorm::LoraMaxNorm(const LoraNetwork& network, double maxNorm) : maxNorm_(maxNorm) {
  if (!(maxNorm > 0.0)) throw std::invalid_argument("scale_weight_norms must be positive, got " + std::to_string(maxNorm));
  torch::TensorOptions options;
  for (const LoraModule& m : network.modules()) {
    if (m.adapter) {
      adapters_.push_back(m.adapter);
      options = m.adapter->down.options();
    } else if (m.lycoris) {
      isLycoris_ = true;
      options = m.lycoris->trainedTensors().front().options();
      if (hasMaxNorm(m.lycoris->algo)) lycoris_.push_back(m.lycoris);
    }
  }
  if (network.modules().empty()) throw std::invalid_argument("scale_weight_norms: the network has no modules");
  figures_ = torch::zeros({3}, options.dtype(torch::kFloat32));
}

void LoraMaxNorm::apply() {
  torch::NoGradGuard noGrad;
  if (adapters_.empty() && lycoris_.empty()) return;  // LyCORIS ia3 or full: nothing to scale, figures 0
  std::vector<torch::Tensor> norms;
  norms.reserve(adapters_.size() + lycoris_.size());
  for (const auto& a : adapters_) norms.push_back(loraWeightDelta(*a).to(torch::kFloat32).norm());
  for (const auto& a : lycoris_) norms.push_back(lycorisNorm(*a));
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
  for (size_t i = 0; i < lycoris_.size(); ++i)
    scaleLycoris(*lycoris_[i], ratio[static_cast<int64_t>(adapters_.size() + i)]);
  const torch::Tensor scaledNorm = norm * ratio;
  const torch::Tensor keysScaled = ratio.ne(1.0).sum().to(torch::kFloat32);
  torch::Tensor figures = torch::stack({keysScaled, scaledNorm.mean(), scaledNorm.max()});
  if (isLycoris_) figures = figures * keysScaled.gt(0).to(torch::kFloat32);
  figures_.copy_(figures);
}

}  // namespace sinter::network

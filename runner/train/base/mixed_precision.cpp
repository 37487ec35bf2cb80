#include "train/base/mixed_precision.h"

#include <stdexcept>

namespace sinter::train {

MixedPrecision parseMixedPrecision(const std::string& name) {
  if (name == "no" || name.empty()) return MixedPrecision::No;
  if (name == "fp16") return MixedPrecision::Fp16;
  if (name == "bf16") return MixedPrecision::Bf16;
  throw std::invalid_argument("mixed_precision '" + name + "' is not one of no, fp16, bf16");
}

PrecisionPlan planPrecision(MixedPrecision mixed, bool fullFp16, bool fullBf16, bool fullWeights) {
  if (fullFp16 && mixed != MixedPrecision::Fp16)
    throw std::invalid_argument("full_fp16 requires mixed_precision=\"fp16\"");
  if (fullBf16 && mixed != MixedPrecision::Bf16)
    throw std::invalid_argument("full_bf16 requires mixed_precision=\"bf16\"");
  if (fullFp16 && fullBf16) throw std::invalid_argument("full_fp16 and full_bf16 cannot both be set");
  PrecisionPlan plan;
  if (mixed == MixedPrecision::Fp16) plan.weightDtype = torch::kFloat16;
  if (mixed == MixedPrecision::Bf16) plan.weightDtype = torch::kBFloat16;
  if (fullFp16 || fullBf16) plan.loraDtype = plan.weightDtype;
  // sd-scripts patches the scaler for full_fp16; fp16 training scales the loss either way.
  plan.lossScaling = mixed == MixedPrecision::Fp16;
  plan.float32Masters = fullWeights && mixed != MixedPrecision::No && !fullFp16 && !fullBf16;
  return plan;
}

void castFrozen(torch::nn::Module& module, torch::Dtype dtype) {
  torch::NoGradGuard noGrad;
  for (auto& p : module.parameters()) {
    p.set_requires_grad(false);
    if (p.is_floating_point() && p.scalar_type() != dtype) p.set_data(p.data().to(dtype));
  }
  for (auto& b : module.buffers())
    if (b.is_floating_point() && b.scalar_type() != dtype) b.set_data(b.data().to(dtype));
}

LossScaler::LossScaler(torch::Device device, double initScale, double growthFactor, double backoffFactor,
                       int64_t growthInterval)
    : growthFactor_(growthFactor), backoffFactor_(backoffFactor), growthInterval_(growthInterval) {
  scale_ = torch::full({1}, initScale, torch::TensorOptions().dtype(torch::kFloat32).device(device));
  growthTracker_ = torch::zeros({1}, torch::TensorOptions().dtype(torch::kInt32).device(device));
}

torch::Tensor LossScaler::unscale(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard noGrad;
  torch::Tensor foundInf = torch::zeros({1}, scale_.options());
  const torch::Tensor invScale = scale_.reciprocal();
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : params) grads.push_back(p.grad());  // persistent buffers (AdamW)
  if (grads.empty()) return foundInf;
  if (scale_.is_cuda()) {
    at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, invScale);
    return foundInf;
  }
  // The same on other devices (libtorch 1.13 has the fused op for CUDA only).
  for (torch::Tensor& g : grads) {
    foundInf = torch::maximum(foundInf, (~torch::isfinite(g)).any().to(torch::kFloat32).reshape({1}));
    g.mul_(invScale.to(g.scalar_type()));
  }
  return foundInf;
}

void LossScaler::update(const torch::Tensor& foundInf) {
  torch::NoGradGuard noGrad;
  if (scale_.is_cuda()) {
    at::_amp_update_scale_(scale_, growthTracker_, foundInf, growthFactor_, backoffFactor_, growthInterval_);
    return;
  }
  const torch::Tensor found = foundInf.reshape({1}) > 0;
  const torch::Tensor tracker = torch::where(found, torch::zeros_like(growthTracker_), growthTracker_ + 1);
  const torch::Tensor grow = tracker >= growthInterval_;
  scale_.copy_(torch::where(found, scale_ * backoffFactor_, torch::where(grow, scale_ * growthFactor_, scale_)));
  growthTracker_.copy_(torch::where(grow, torch::zeros_like(tracker), tracker));
}

}  // namespace sinter::train

#include "models/linear.h"

namespace sinter::models {

namespace F = torch::nn::functional;

LinearImpl::LinearImpl(int64_t inFeatures, int64_t outFeatures, bool withBias) {
  weight = register_parameter("weight", torch::empty({outFeatures, inFeatures}));
  // Same initialisation as torch.nn.Linear, so random checkpoints have sensible activations.
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (withBias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(inFeatures));
    bias = register_parameter("bias", torch::empty({outFeatures}).uniform_(-bound, bound));
  }
}

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
  torch::Tensor y = F::linear(x, weight, bias);
  if (lora) {
    // sd-scripts' networks.lora: dropout (network_dropout) acts on lora_down's output.
    torch::Tensor h = F::linear(x.to(lora->down.scalar_type()), lora->down);
    if (is_training() && lora->dropout > 0.0) h = F::dropout(h, F::DropoutFuncOptions().p(lora->dropout).training(true));
    torch::Tensor delta = F::linear(h, lora->up);
    y = y + (delta * (lora->scale() * lora->multiplier)).to(y.scalar_type());
  }
  return y;
}

bool anyLoraDropout(torch::nn::Module& root) {
  for (const auto& module : root.modules(/*include_self=*/false))
    if (auto linear = std::dynamic_pointer_cast<LinearImpl>(module))
      if (linear->lora && linear->lora->dropout > 0.0) return true;
  return false;
}

}  // namespace sinter::models

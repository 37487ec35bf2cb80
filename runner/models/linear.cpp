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
  torch::Tensor y = served ? servedLinear(x, served, bias) : F::linear(x, weight, bias);
  if (lora) {
    // As sd-scripts trains under autocast, the adapter computes in the activations' dtype (bf16 or
    // fp16 under mixed precision): its fp32 weights are cast (or their kept copies used), and their
    // gradients come back fp32.
    const torch::ScalarType dtype = x.scalar_type();
    // sd-scripts' networks.lora: dropout (network_dropout) acts on lora_down's output.
    torch::Tensor h = F::linear(x, lora->downIn(dtype));
    if (is_training() && lora->dropout > 0.0) h = F::dropout(h, F::DropoutFuncOptions().p(lora->dropout).training(true));
    // y + scale * (h up^T) as one GEMM whose epilogue adds into the base output.
    const int64_t outFeatures = lora->up.size(0), rank = lora->up.size(1);
    y = torch::addmm(y.reshape({-1, outFeatures}), h.reshape({-1, rank}), lora->upIn(dtype).t(), /*beta=*/1.0,
                     /*alpha=*/lora->scale() * lora->multiplier)
            .view(y.sizes());
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

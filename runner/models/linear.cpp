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
  if (!lora) return served ? servedLinear(x, served, bias) : F::linear(x, weight, bias);
  // As sd-scripts trains under autocast, the adapter computes in the activations' dtype (bf16 or
  // fp16 under mixed precision): its fp32 weights are cast (or their kept copies used), and their
  // gradients come back fp32.
  const torch::ScalarType dtype = x.scalar_type();
  // sd-scripts' networks.lora: dropout (network_dropout) acts on lora_down's output.
  torch::Tensor h = F::linear(x, lora->downIn(dtype));
  if (is_training() && lora->dropout > 0.0) h = F::dropout(h, F::DropoutFuncOptions().p(lora->dropout).training(true));
  std::vector<int64_t> outSizes = x.sizes().vec();
  outSizes.back() = outFeatures();
  // y + scale * (h up^T) as one GEMM whose epilogue adds into the base output.
  const torch::Tensor h2 = h.reshape({-1, lora->up.size(1)}), upT = lora->upIn(dtype).t();
  const double alpha = lora->scale() * lora->multiplier;
  if (!served && x.is_contiguous() && (x.dim() == 2 || x.dim() == 3)) {
    // The base output as the fresh matrix F::linear computes for such an input (the same GEMM, bit
    // for bit) takes the sum in place: an out-of-place addmm would first copy it whole.
    const torch::Tensor x2 = x.view({-1, inFeatures()});
    torch::Tensor y = bias.defined() ? torch::addmm(bias, x2, weight.t()) : torch::mm(x2, weight.t());
    return y.addmm_(h2, upT, /*beta=*/1.0, alpha).view(outSizes);
  }
  // Otherwise F::linear's output (or a served weight's, which belongs to its own autograd node) is
  // a view or another node's: added out of place.
  const torch::Tensor base = served ? servedLinear(x, served, bias) : F::linear(x, weight, bias);
  return torch::addmm(base.reshape({-1, outFeatures()}), h2, upT, /*beta=*/1.0, alpha).view(outSizes);
}

bool anyLoraDropout(torch::nn::Module& root) {
  for (const auto& module : root.modules(/*include_self=*/false))
    if (auto linear = std::dynamic_pointer_cast<LinearImpl>(module))
      if (linear->lora && linear->lora->dropout > 0.0) return true;
  return false;
}

}  // namespace sinter::models

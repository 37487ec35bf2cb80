#include "models/layers/linear.h"

#include "models/layers/conv2d.h"
#include "models/layers/parameters_from_checkpoint.h"
#include "models/adapters/frozen_linear_lora.h"
#include "models/adapters/lycoris_adapter.h"

namespace sinter::models {

namespace F = torch::nn::functional;

LinearImpl::LinearImpl(int64_t inFeatures, int64_t outFeatures, bool withBias) {
  weight = register_parameter("weight", torch::empty({outFeatures, inFeatures}));
  if (withBias) bias = register_parameter("bias", torch::empty({outFeatures}));
  if (ParametersFromCheckpoint::active()) return;
  // Same initialisation as torch.nn.Linear, so random checkpoints have sensible activations.
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (withBias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(inFeatures));
    torch::NoGradGuard noGrad;
    bias.uniform_(-bound, bound);
  }
}

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
  if (lycoris) {
    // The frozen weight as the forward uses it (a served one in the activations' dtype).
    const torch::Tensor w = served ? served->get(x.scalar_type()) : weight;
    const LycorisLayer layer{w, bias, [this](const torch::Tensor& in) {
                               return served ? servedLinear(in, served, bias) : F::linear(in, weight, bias);
                             }};
    return lycorisForward(*lycoris, x, layer, is_training());
  }
  if (!lora) return served ? servedLinear(x, served, bias) : F::linear(x, weight, bias);
  // As sd-scripts trains under autocast, the adapter computes in the activations' dtype (bf16 or
  // fp16 under mixed precision): its fp32 weights are cast (or their kept copies used), and their
  // gradients come back fp32.
  const torch::ScalarType dtype = x.scalar_type();
  const bool dropout = is_training() && lora->drawsRandom();
  const bool frozen = !weight.requires_grad() && !(bias.defined() && bias.requires_grad()) && !(served && served->trained());
  if (!dropout && frozen && x.is_contiguous() && (x.dim() == 2 || x.dim() == 3))
    return frozenLinearWithLora(x, weight, bias, lora->downIn(dtype), lora->upIn(dtype), lora->scale() * lora->multiplier,
                                served);
  // Otherwise by autograd: sd-scripts' dropouts (network_dropout, rank_dropout, module_dropout) act
  // on lora_down's output; F::linear's output (or a served weight's, which belongs to its own
  // autograd node) is added to out of place.
  torch::Tensor h = F::linear(x, lora->downIn(dtype));
  double scale = lora->scale();
  if (dropout) h = loraDropouts(*lora, h, &scale);
  std::vector<int64_t> outSizes = x.sizes().vec();
  outSizes.back() = outFeatures();
  const torch::Tensor base = served ? servedLinear(x, served, bias) : F::linear(x, weight, bias);
  return torch::addmm(base.reshape({-1, outFeatures()}), h.reshape({-1, lora->up.size(1)}), lora->upIn(dtype).t(),
                      /*beta=*/1.0, scale * lora->multiplier)
      .view(outSizes);
}

bool anyLoraDropout(torch::nn::Module& root) {
  for (const auto& module : root.modules(/*include_self=*/false))
    if (auto linear = std::dynamic_pointer_cast<LinearImpl>(module)) {
      if ((linear->lora && linear->lora->drawsRandom()) || (linear->lycoris && linear->lycoris->drawsRandom())) return true;
    } else if (auto conv = std::dynamic_pointer_cast<Conv2dImpl>(module)) {
      if ((conv->lora && conv->lora->drawsRandom()) || (conv->lycoris && conv->lycoris->drawsRandom())) return true;
    }
  return false;
}

}  // namespace sinter::models

#include "models/layers/conv2d.h"

#include <cmath>

#include "models/layers/frozen_conv2d.h"
#include "models/layers/parameters_from_checkpoint.h"
#include "models/adapters/lycoris_adapter.h"

namespace sinter::models {

namespace F = torch::nn::functional;

Conv2dImpl::Conv2dImpl(int64_t inChannels, int64_t outChannels, int64_t kernelSize, int64_t stride_, int64_t padding_)
    : stride(stride_), padding(padding_) {
  weight = register_parameter("weight", torch::empty({outChannels, inChannels, kernelSize, kernelSize}));
  bias = register_parameter("bias", torch::empty({outChannels}));
  if (ParametersFromCheckpoint::active()) return;
  // torch.nn.Conv2d's initialisation, in its order, so seeded random checkpoints stay as they were.
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  const double bound = 1.0 / std::sqrt(static_cast<double>(inChannels * kernelSize * kernelSize));
  torch::NoGradGuard noGrad;
  bias.uniform_(-bound, bound);
}

torch::Tensor Conv2dImpl::forward(const torch::Tensor& x) {
  const auto options = F::Conv2dFuncOptions().stride(stride).padding(padding);
  // The frozen convolution: a served kernel (fp8_base) through its own autograd node.
  auto base = [&](const torch::Tensor& in) {
    return served ? frozenConv2d(in, served, bias, stride, padding) : F::conv2d(in, weight, F::Conv2dFuncOptions(options).bias(bias));
  };
  if (lycoris) {
    // The frozen kernel as the forward uses it (a served one in the activations' dtype).
    const torch::Tensor w = served ? served->get(x.scalar_type()) : weight;
    const LycorisLayer layer{w, bias, base};
    return lycorisForward(*lycoris, x, layer, is_training());
  }
  torch::Tensor out = base(x);
  if (!lora) return out;
  // The adapter computes in the activations' dtype, as on a Linear (mixed precision).
  const torch::ScalarType dtype = x.scalar_type();
  torch::Tensor h = F::conv2d(x, lora->downIn(dtype), options);
  double scale = lora->scale();
  if (is_training() && lora->drawsRandom()) h = loraDropouts(*lora, h, &scale);
  return out.add(F::conv2d(h, lora->upIn(dtype)), scale * lora->multiplier);
}

}  // namespace sinter::models

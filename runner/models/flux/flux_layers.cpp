#include "models/flux/flux_layers.h"

#include "kernels/fused_kernels.h"
#include "models/unet/timestep_embedding.h"

namespace sinter::models {

namespace F = torch::nn::functional;

torch::Tensor fluxTimestepEmbedding(const torch::Tensor& t, int64_t dim) {
  // BFL's timestep_embedding(t, 256) with time_factor 1000; multiplied in float32 as it does.
  return timestepEmbedding(t.to(torch::kFloat32) * 1000.0, dim, 10000.0);
}

torch::Tensor fluxLayerNorm(const torch::Tensor& x) {
  return torch::layer_norm(x, {x.size(-1)}, /*weight=*/{}, /*bias=*/{}, 1e-6);
}

torch::Tensor geluTanh(const torch::Tensor& x) { return torch::gelu(x, "tanh"); }

bool fluxKernelsTake(const torch::Tensor& x, bool fused) { return fused && x.is_cuda() && kernels::fluxRowsFitKernels(x); }

torch::Tensor FluxModulationOut::normModulate(const torch::Tensor& x, bool fused) const {
  return fluxKernelsTake(x, fused) ? kernels::fluxLayerNormModulate(x, shift, scale, 1e-6) : modulate(fluxLayerNorm(x));
}

torch::Tensor FluxModulationOut::gatedAdd(const torch::Tensor& residual, const torch::Tensor& y, bool fused) const {
  return fluxKernelsTake(residual, fused) ? kernels::fluxGatedResidual(residual, gate, y) : residual + gate * y;
}

FluxMlpEmbedderImpl::FluxMlpEmbedderImpl(int64_t inDim, int64_t hiddenDim) {
  in_layer = register_module("in_layer", Linear(inDim, hiddenDim));
  out_layer = register_module("out_layer", Linear(hiddenDim, hiddenDim));
}

torch::Tensor FluxMlpEmbedderImpl::forward(const torch::Tensor& x) { return out_layer(torch::silu(in_layer(x))); }

FluxRmsNormImpl::FluxRmsNormImpl(int64_t dim) { scale = register_parameter("scale", torch::ones({dim})); }

torch::Tensor FluxRmsNormImpl::forward(const torch::Tensor& x) {
  const torch::Tensor x32 = x.to(torch::kFloat32);
  const torch::Tensor rrms = torch::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + 1e-6);
  return (x32 * rrms * scale.to(torch::kFloat32)).to(x.scalar_type());
}

FluxQkNormImpl::FluxQkNormImpl(int64_t headDim) {
  query_norm = register_module("query_norm", FluxRmsNorm(headDim));
  key_norm = register_module("key_norm", FluxRmsNorm(headDim));
}

FluxModulationImpl::FluxModulationImpl(int64_t hidden, bool isDouble) : sets_(isDouble ? 2 : 1) {
  lin = register_module("lin", Linear(hidden, 3 * sets_ * hidden));
}

std::vector<FluxModulationOut> FluxModulationImpl::forward(const torch::Tensor& vec) {
  const std::vector<torch::Tensor> parts = lin(torch::silu(vec)).unsqueeze(1).chunk(3 * sets_, -1);
  std::vector<FluxModulationOut> out;
  for (int64_t s = 0; s < sets_; ++s) out.push_back({parts[3 * s], parts[3 * s + 1], parts[3 * s + 2]});
  return out;
}

std::vector<FluxModulationOut> fluxModulationFromVectors(const torch::Tensor& vectors) {
  std::vector<FluxModulationOut> out;
  for (int64_t s = 0; s + 3 <= vectors.size(1); s += 3)
    out.push_back({vectors.narrow(1, s, 1), vectors.narrow(1, s + 1, 1), vectors.narrow(1, s + 2, 1)});
  return out;
}

FluxMlpImpl::FluxMlpImpl(int64_t hidden, int64_t mlpHidden) {
  fc0 = register_module("0", Linear(hidden, mlpHidden));
  fc2 = register_module("2", Linear(mlpHidden, hidden));
}

torch::Tensor FluxMlpImpl::forward(const torch::Tensor& x) { return fc2(geluTanh(fc0(x))); }

FluxLastLayerImpl::FluxLastLayerImpl(int64_t hidden, int64_t outChannels, bool ownModulation) {
  linear = register_module("linear", Linear(hidden, outChannels));
  if (!ownModulation) return;
  adaLN = Linear(hidden, 2 * hidden);
  adaLN_modulation = register_module("adaLN_modulation", torch::nn::ModuleList(torch::nn::SiLU(), adaLN));
}

torch::Tensor FluxLastLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& vec) {
  torch::Tensor shift, scale;
  if (adaLN) {
    const std::vector<torch::Tensor> shiftScale = adaLN(torch::silu(vec)).chunk(2, 1);
    shift = shiftScale[0].unsqueeze(1);
    scale = shiftScale[1].unsqueeze(1);
  } else {
    shift = vec.narrow(1, 0, 1);
    scale = vec.narrow(1, 1, 1);
  }
  return linear((1 + scale) * fluxLayerNorm(x) + shift);
}

}  // namespace sinter::models

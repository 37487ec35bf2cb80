#pragma once
// The small parts FLUX's blocks are made of, named after their checkpoint keys (BFL's
// modules/layers.py): MLPEmbedder (in_layer, out_layer), RMSNorm (scale), QKNorm (query_norm,
// key_norm), Modulation (lin), the GELU(tanh) MLP ("0", "2") and LastLayer (adaLN_modulation.1,
// linear); and the functions between them.
#include <torch/torch.h>

#include "models/layers/linear.h"

namespace sinter::models {

// FLUX's sinusoidal embedding of t in [0, 1] (or of the guidance scale): t * 1000 embedded into
// `dim` (256) channels, max period 10000, [cos, sin]; float32.
torch::Tensor fluxTimestepEmbedding(const torch::Tensor& t, int64_t dim = 256);

// LayerNorm over the last dim without affine parameters, eps 1e-6 (img_norm1/2, pre_norm, norm_final).
torch::Tensor fluxLayerNorm(const torch::Tensor& x);
torch::Tensor geluTanh(const torch::Tensor& x);

// out_layer(silu(in_layer(x)))
class FluxMlpEmbedderImpl : public torch::nn::Module {
 public:
  FluxMlpEmbedderImpl(int64_t inDim, int64_t hiddenDim);
  torch::Tensor forward(const torch::Tensor& x);
  Linear in_layer{nullptr}, out_layer{nullptr};
};
TORCH_MODULE(FluxMlpEmbedder);

// x * rsqrt(mean(x^2) + 1e-6) * scale over the last dim, computed in float32, returned in x's dtype.
class FluxRmsNormImpl : public torch::nn::Module {
 public:
  explicit FluxRmsNormImpl(int64_t dim);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor scale;
};
TORCH_MODULE(FluxRmsNorm);

// RMSNorm of the queries and of the keys, per head.
class FluxQkNormImpl : public torch::nn::Module {
 public:
  explicit FluxQkNormImpl(int64_t headDim);
  FluxRmsNorm query_norm{nullptr}, key_norm{nullptr};
};
TORCH_MODULE(FluxQkNorm);

// shift, scale, gate: x -> (1 + scale) * x + shift, and residual + gate * f(...).
struct FluxModulationOut {
  torch::Tensor shift, scale, gate;  // [B, 1, hidden]
  torch::Tensor modulate(const torch::Tensor& normalized) const { return (1 + scale) * normalized + shift; }
  // modulate(fluxLayerNorm(x)), and residual + gate * y. fused: where fluxKernelsTake(x, fused),
  // one CUDA kernel each way (kernels/fused_kernels.h), within the dtype's rounding of the stock operators.
  torch::Tensor normModulate(const torch::Tensor& x, bool fused) const;
  torch::Tensor gatedAdd(const torch::Tensor& residual, const torch::Tensor& y, bool fused) const;
};

// Chroma: the sets (shift, scale, gate) read from precomputed vectors [B, 3·sets, hidden], in that order.
std::vector<FluxModulationOut> fluxModulationFromVectors(const torch::Tensor& vectors);

// Whether the blocks' fused kernels run for activations x [B, L, hidden]: asked for, on CUDA, and
// rows the kernels take (hidden a multiple of 4 up to 4096; FLUX's is 3072).
bool fluxKernelsTake(const torch::Tensor& x, bool fused);

// lin(silu(vec)) split into one (single blocks) or two (double blocks: attention, MLP) sets.
class FluxModulationImpl : public torch::nn::Module {
 public:
  FluxModulationImpl(int64_t hidden, bool isDouble);
  std::vector<FluxModulationOut> forward(const torch::Tensor& vec);
  Linear lin{nullptr};

 private:
  int64_t sets_;
};
TORCH_MODULE(FluxModulation);

// "0": Linear(hidden, mlp), GELU(tanh), "2": Linear(mlp, hidden)
class FluxMlpImpl : public torch::nn::Module {
 public:
  FluxMlpImpl(int64_t hidden, int64_t mlpHidden);
  torch::Tensor forward(const torch::Tensor& x);
  Linear fc0{nullptr}, fc2{nullptr};  // registered as "0" and "2"
};
TORCH_MODULE(FluxMlp);

// final_layer: shift, scale = adaLN_modulation.1(silu(vec)); linear((1 + scale) * norm(x) + shift).
// Chroma's has no adaLN_modulation (ownModulation false): vec is then its [B, 2, hidden] shift and scale.
class FluxLastLayerImpl : public torch::nn::Module {
 public:
  FluxLastLayerImpl(int64_t hidden, int64_t outChannels, bool ownModulation = true);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& vec);
  Linear linear{nullptr};
  Linear adaLN{nullptr};  // adaLN_modulation.1 (adaLN_modulation.0 is the SiLU)
  torch::nn::ModuleList adaLN_modulation{nullptr};
};
TORCH_MODULE(FluxLastLayer);

}  // namespace sinter::models

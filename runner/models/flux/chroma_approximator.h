#pragma once
// Chroma's distilled_guidance_layer (sd-scripts' chroma_models.Approximator): one MLP that makes
// every block's modulation from [timestep, guidance, vector index] embeddings, in place of FLUX.1's
// time_in / vector_in / guidance_in and its per-block modulation Linears.
//   x = in_proj(input); x = x + layers.i(norms.i(x)) for each i; out_proj(x)
#include <torch/torch.h>

#include <vector>

#include "models/flux/flux_config.h"
#include "models/flux/flux_layers.h"
#include "models/layers/linear.h"

namespace sinter::models {

class ChromaApproximatorImpl : public torch::nn::Module {
 public:
  explicit ChromaApproximatorImpl(const FluxConfig& config);

  // Chroma.get_mod_vectors: timesteps [B] in [0, 1] and guidance [B], each embedded as FLUX embeds a
  // timestep into inDim/4 channels, beside each vector's index 0..count-1 embedded into inDim/2
  // (times 1000, as timestep_embedding does to any t). Returns [B, count, hidden] in `dtype`, the
  // order fluxModulationSlices reads: the single blocks', the double blocks' image then text
  // streams', the last layer's.
  torch::Tensor forward(const torch::Tensor& timesteps, const torch::Tensor& guidance, torch::ScalarType dtype);

  // The vector indices' embedding [count, inDim/2], made once on the CPU in float32.
  const torch::Tensor& indexEmbedding() const { return indexEmbedding_; }

  Linear in_proj{nullptr}, out_proj{nullptr};
  torch::nn::ModuleList layers{nullptr}, norms{nullptr};

 private:
  int64_t inDim_, count_;
  // A constant, not a buffer: no checkpoint key.
  torch::Tensor indexEmbedding_, indexOnDevice_;
  std::vector<FluxMlpEmbedder> layers_;
  std::vector<FluxRmsNorm> norms_;
};
TORCH_MODULE(ChromaApproximator);

// Where block i's vectors lie in the approximator's output (chroma_models.distribute_modulations).
struct ChromaModulationSlices {
  int64_t start, count;
};
ChromaModulationSlices chromaSingleBlockSlice(const FluxConfig& config, int64_t block);   // 3 vectors
ChromaModulationSlices chromaDoubleImgSlice(const FluxConfig& config, int64_t block);     // 6 vectors
ChromaModulationSlices chromaDoubleTxtSlice(const FluxConfig& config, int64_t block);     // 6 vectors
ChromaModulationSlices chromaLastLayerSlice(const FluxConfig& config);                    // shift, scale

}  // namespace sinter::models

#include "models/flux/chroma_approximator.h"

#include <string>

namespace sinter::models {

ChromaApproximatorImpl::ChromaApproximatorImpl(const FluxConfig& c) : inDim_(c.approximatorInDim), count_(c.chromaModulationCount()) {
  in_proj = register_module("in_proj", Linear(c.approximatorInDim, c.approximatorHiddenSize));
  layers = register_module("layers", torch::nn::ModuleList());
  norms = register_module("norms", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.approximatorDepth; ++i) {
    layers_.push_back(FluxMlpEmbedder(c.approximatorHiddenSize, c.approximatorHiddenSize));
    layers->push_back(layers_.back());
    norms_.push_back(FluxRmsNorm(c.approximatorHiddenSize));
    norms->push_back(norms_.back());
  }
  out_proj = register_module("out_proj", Linear(c.approximatorHiddenSize, c.hiddenSize));
  // On the CPU, as sd-scripts makes timestep_embedding's frequencies (then moves them): an index times
  // 1000 reaches ~3.4e5 radians, where the GPU's exp rounding one frequency differently moves the sine.
  indexEmbedding_ = fluxTimestepEmbedding(torch::arange(count_, torch::kInt64), inDim_ / 2);
}

torch::Tensor ChromaApproximatorImpl::forward(const torch::Tensor& timesteps, const torch::Tensor& guidance,
                                              torch::ScalarType dtype) {
  const int64_t b = timesteps.size(0);
  // Copied to the device once, in the eager warm-up before any capture.
  if (!indexOnDevice_.defined() || indexOnDevice_.device() != timesteps.device()) indexOnDevice_ = indexEmbedding_.to(timesteps.device());
  const torch::Tensor& index = indexOnDevice_;
  const torch::Tensor timestepGuidance =
      torch::cat({fluxTimestepEmbedding(timesteps, inDim_ / 4), fluxTimestepEmbedding(guidance, inDim_ / 4)}, 1);
  const torch::Tensor input = torch::cat({timestepGuidance.unsqueeze(1).expand({b, count_, inDim_ / 2}),
                                          index.unsqueeze(0).expand({b, count_, inDim_ / 2})},
                                         -1)
                                  .to(dtype);
  torch::Tensor x = in_proj(input);
  for (size_t i = 0; i < layers_.size(); ++i) x = x + layers_[i](norms_[i](x));
  return out_proj(x);
}

ChromaModulationSlices chromaSingleBlockSlice(const FluxConfig&, int64_t block) { return {3 * block, 3}; }

ChromaModulationSlices chromaDoubleImgSlice(const FluxConfig& c, int64_t block) { return {3 * c.depthSingleBlocks + 6 * block, 6}; }

ChromaModulationSlices chromaDoubleTxtSlice(const FluxConfig& c, int64_t block) {
  return {3 * c.depthSingleBlocks + 6 * c.depth + 6 * block, 6};
}

ChromaModulationSlices chromaLastLayerSlice(const FluxConfig& c) { return {3 * c.depthSingleBlocks + 12 * c.depth, 2}; }

}  // namespace sinter::models

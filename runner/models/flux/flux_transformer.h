#pragma once
// The FLUX.1 transformer in BFL's single-file layout (flux1-dev/schnell.safetensors: img_in,
// txt_in, time_in, vector_in, guidance_in (dev), double_blocks.N, single_blocks.N, final_layer):
// the velocity prediction for packed latent tokens.
#include <torch/torch.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/flux/chroma_approximator.h"
#include "models/layers/block_swap.h"
#include "models/flux/flux_config.h"
#include "models/flux/flux_double_block.h"
#include "models/flux/flux_layers.h"
#include "models/flux/flux_single_block.h"
#include "models/layers/linear.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

// blocks_to_swap as sd-scripts splits it: N / 2 double and (N - N / 2) * 2 single blocks, at most
// depth - 2 and single depth - 2 (else std::invalid_argument naming blocks_to_swap and its limit).
struct FluxBlockSwapSplit {
  int64_t doubles = 0, singles = 0;
};
FluxBlockSwapSplit fluxBlockSwapSplit(const FluxConfig& config, int64_t blocksToSwap);

class FluxTransformerImpl : public torch::nn::Module {
 public:
  explicit FluxTransformerImpl(const FluxConfig& config);

  // img: [B, L, in] packed latents (flux_latents.h); imgIds: [B, L, 3]; txt: [B, T, context];
  // txtIds: [B, T, 3] (zeros); timesteps: [B] in [0, 1] (sigma; embedded as t * 1000); y: [B, vec]
  // (CLIP-L pooled; Chroma has no CLIP-L: ignored, may be undefined); guidance: [B] guidance scale,
  // required by dev and Chroma, ignored (may be undefined) for schnell; txtMask: undefined or [B, T]
  // (nonzero: a real token; sd-scripts' apply_t5_attn_mask), required by Chroma, which also attends
  // to the first padding token (Chroma.forward's attn_padding 1).
  // Computes in img's dtype. Returns [B, L, in].
  torch::Tensor forward(const torch::Tensor& img, const torch::Tensor& imgIds, const torch::Tensor& txt,
                        const torch::Tensor& txtIds, const torch::Tensor& timesteps, const torch::Tensor& y,
                        const torch::Tensor& guidance = {}, const torch::Tensor& txtMask = {});

  // Recompute each double and single block in backward instead of keeping its activations.
  // `preserveRngState`: the blocks draw random numbers (LoRA dropout).
  void setGradientCheckpointing(bool enabled, bool preserveRngState = true) {
    gradientCheckpointing_ = enabled;
    preserveRngState_ = preserveRngState;
  }
  bool gradientCheckpointing() const { return gradientCheckpointing_; }
  // cpu_offload_checkpointing: the checkpointed blocks' inputs wait for the backward pass in host
  // memory (less device memory, a copy each way per block).
  void setCheckpointOffload(bool enabled) { checkpointOffload_ = enabled; }

  // The project's fused kernels where a block has one (QK RMSNorm + RoPE), on CUDA inputs;
  // within the compute dtype's rounding of the stock operators (tests/gpu/fused_kernels_check.cpp).
  void setFusedKernels(bool enabled);

  // blocks_to_swap (fluxBlockSwapSplit): that many blocks' worth of Linear weights leave the
  // device, each kind's last blocks streaming through a ring (models/layers/block_swap.h), stored as
  // `storedAs` (float8 with fp8_base). Before the model moves to `device`, on frozen weights.
  void enableBlockSwap(int64_t blocksToSwap, const torch::Device& device, torch::ScalarType storedAs);
  // Whether a region ("single_blocks.30") streams its weights: it must run uncaptured.
  bool streamsWeights(const std::string& region) const;
  // "double_blocks.13-18, single_blocks.28-37", or "" without block swap.
  std::string streamedBlocks() const;
  const std::shared_ptr<BlockSwap>& doubleSwap() const { return doubleSwap_; }
  const std::shared_ptr<BlockSwap>& singleSwap() const { return singleSwap_; }

  // The seam where each block runs, for the compile engine's captured regions. A block runs as
  // `body(inputs)`, one tensor in, one out:
  //   "double_blocks.N": inputs (img, txt, vec, rotations[, mask]) -> [B, T + L, hidden], the new
  //                      txt and img joined in that order;
  //   "single_blocks.N": inputs (x, vec, rotations[, mask]) -> [B, T + L, hidden].
  // rotations never need grad; mask (boolean, [B, 1, 1, T + L]) is present only when txtMask was
  // given. Chroma's vec is the block's own modulation vectors (ChromaApproximator). Without a runner (or from a runner, through runBlockDefault) a block runs eagerly, or
  // checkpointed when gradient checkpointing is on and gradients are recorded.
  using BlockBody = std::function<torch::Tensor(const std::vector<torch::Tensor>& inputs)>;
  using BlockRunner =
      std::function<torch::Tensor(const std::string& region, const std::vector<torch::Tensor>& inputs, const BlockBody& body)>;
  void setBlockRunner(BlockRunner runner) { blockRunner_ = std::move(runner); }
  torch::Tensor runBlockDefault(const std::vector<torch::Tensor>& inputs, const BlockBody& body);
  // The regions in forward order: double_blocks.0 .. N-1, then single_blocks.0 .. M-1.
  const std::vector<std::string>& blockRegions() const { return regions_; }

  const FluxConfig& config() const { return config_; }

  // The keys' prefix in a file: "" (BFL's files) or "model.diffusion_model." (ComfyUI saves).
  static std::string checkpointPrefix(const io::SafetensorsFile& file);
  static FluxConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix = "");
  // Every key must be there with its shape (F32, F16 or BF16, converted to the module's dtype);
  // a CheckpointError lists what is missing or misshapen.
  void loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix = "");
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors(const std::string& prefix = "") const;

  Linear img_in{nullptr}, txt_in{nullptr};
  FluxMlpEmbedder time_in{nullptr}, vector_in{nullptr}, guidance_in{nullptr};  // guidance_in: dev only; none in Chroma
  ChromaApproximator distilled_guidance_layer{nullptr};                         // Chroma only
  torch::nn::ModuleList double_blocks{nullptr}, single_blocks{nullptr};
  FluxLastLayer final_layer{nullptr};

 private:
  torch::Tensor runBlock(size_t region, const std::vector<torch::Tensor>& inputs, const BlockBody& body);

  FluxConfig config_;
  std::vector<FluxDoubleBlock> doubles_;
  std::vector<FluxSingleBlock> singles_;
  std::vector<std::string> regions_;
  bool gradientCheckpointing_ = false;
  bool preserveRngState_ = true;
  bool checkpointOffload_ = false;
  BlockRunner blockRunner_;
  std::shared_ptr<BlockSwap> doubleSwap_, singleSwap_;
};
TORCH_MODULE(FluxTransformer);

}  // namespace sinter::models

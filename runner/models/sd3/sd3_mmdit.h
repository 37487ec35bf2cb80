#pragma once
// SD 3 / 3.5's MMDiT in SAI's single-file layout (sd3_medium.safetensors, sd3.5_medium/large:
// model.diffusion_model.{x_embedder, pos_embed, t_embedder, y_embedder, context_embedder,
// joint_blocks.N, final_layer}): the flow-matching prediction for 16-channel latents.
#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/layers/block_swap.h"
#include "models/layers/conv2d.h"
#include "models/layers/linear.h"
#include "models/sd3/sd3_mmdit_block.h"
#include "models/sd3/sd3_mmdit_config.h"
#include "models/sd3/sd3_position_table.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

// The patches of the stored position table an image takes: centred (top, left < 0), or from
// (top, left) as sd-scripts' pos_emb_random_crop_rate draws it.
struct Sd3PosEmbedCrop {
  int64_t top = -1, left = -1;
};

// out(silu(in(x))) registered as mlp.0 and mlp.2 (t_embedder, y_embedder).
class Sd3EmbedderImpl : public torch::nn::Module {
 public:
  Sd3EmbedderImpl(int64_t inDim, int64_t hidden);
  torch::Tensor forward(const torch::Tensor& x);
  Linear in{nullptr}, out{nullptr};
};
TORCH_MODULE(Sd3Embedder);

// blocks_to_swap's limit, as sd-scripts asserts it: depth - 2 (std::invalid_argument naming it).
void checkSd3BlocksToSwap(const Sd3MmditConfig& config, int64_t blocksToSwap);

class Sd3MmditImpl : public torch::nn::Module {
 public:
  // withBlocks false: only what lies outside joint_blocks (the random-file writer's first part).
  explicit Sd3MmditImpl(const Sd3MmditConfig& config, bool withBlocks = true);

  // x: [B, 16, H, W] latents (H, W even, at most posEmbedMaxSize patches); timesteps: [B], sigma ·
  // 1000 (embedded as given, no factor); y: [B, adm] pooled; context: [B, T, contextIn]. Computes in
  // x's dtype. Returns [B, 16, H, W].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& timesteps, const torch::Tensor& y,
                        const torch::Tensor& context, const Sd3PosEmbedCrop& crop = {});

  // Recompute each joint block in backward instead of keeping its activations. `preserveRngState`:
  // the blocks draw random numbers (LoRA dropout); `offload`: cpu_offload_checkpointing.
  void setGradientCheckpointing(bool enabled, bool preserveRngState = true, bool offload = false) {
    gradientCheckpointing_ = enabled;
    preserveRngState_ = preserveRngState;
    checkpointOffload_ = offload;
  }

  // enable_scaled_pos_embed: positions from the resolution-scaled tables for these training latent
  // sizes (each dataset's resolution / 8) in place of the stored pos_embed, which stays in the file.
  void enableScaledPosEmbed(const std::vector<int64_t>& latentSizes);
  bool scaledPosEmbed() const { return scaledPosEmbeds_.has_value(); }

  // The side of the position table an image of h x w patches crops from (a random crop's range).
  int64_t posTableSide(int64_t h, int64_t w);
  // Its patches of that table: [1, h·w, hidden] (MMDiT.cropped_pos_embed / cropped_scaled_pos_embed).
  torch::Tensor croppedPosEmbed(int64_t h, int64_t w, const Sd3PosEmbedCrop& crop, torch::Device device, torch::Dtype dtype);

  const Sd3MmditConfig& config() const { return config_; }

  // blocks_to_swap (sd-scripts' MMDiT.enable_block_swap): the Linear weights of the last
  // `blocksToSwap` + 2 joint blocks live in host memory as `storedAs` and stream through a ring of
  // two (models/layers/block_swap.h), so the device holds depth - blocksToSwap blocks' weights; at most
  // depth - 2 (else std::invalid_argument naming blocks_to_swap and its limit). Before moving to the device.
  void enableBlockSwap(int64_t blocksToSwap, const torch::Device& device, torch::ScalarType storedAs);
  const std::shared_ptr<BlockSwap>& blockSwap() const { return blockSwap_; }
  // "joint_blocks.14-23", or "" without block swap.
  std::string streamedBlocks() const;

  // Every key must be there with its shape; a CheckpointError lists what is missing or misshapen.
  void loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix);
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors(const std::string& prefix) const;

  Conv2d x_embedder_proj{nullptr};  // x_embedder.proj
  torch::Tensor pos_embed;          // [1, posEmbedMaxSize², hidden], a stored buffer
  Sd3Embedder t_embedder{nullptr}, y_embedder{nullptr};
  Linear context_embedder{nullptr};
  torch::nn::ModuleList joint_blocks{nullptr};
  Linear final_linear{nullptr}, final_adaLN{nullptr};  // final_layer.linear, final_layer.adaLN_modulation.1

 private:
  Sd3MmditConfig config_;
  std::vector<Sd3JointBlock> blocks_;
  std::optional<Sd3ScaledPosEmbeds> scaledPosEmbeds_;
  std::shared_ptr<BlockSwap> blockSwap_;
  bool gradientCheckpointing_ = false, preserveRngState_ = true, checkpointOffload_ = false;
};
TORCH_MODULE(Sd3Mmdit);

}  // namespace sinter::models

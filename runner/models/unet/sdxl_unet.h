#pragma once
// The SDXL UNet (keys under model.diffusion_model.): eps/v = unet(x_t, t, context, y).
#include <torch/torch.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/layers/joint_context_kv.h"
#include "models/layers/linear.h"
#include "models/unet/sdxl_unet_config.h"
#include "models/unet/sdxl_unet_layout.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

// One input_blocks.N / middle_block / output_blocks.N entry: its layers "0", "1", "2" run in turn,
// each given what it needs (ResBlock: emb, SpatialTransformer: context).
class SdxlUnetBlockImpl : public torch::nn::Module {
 public:
  SdxlUnetBlockImpl(const std::vector<SdxlUnetLayer>& layers, const SdxlUnetConfig& config);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& emb, const torch::Tensor& context);

 private:
  std::vector<std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&)>> layers_;
};
TORCH_MODULE(SdxlUnetBlock);

class SdxlUnetImpl : public torch::nn::Module {
 public:
  static constexpr const char* kPrefix = "model.diffusion_model.";

  explicit SdxlUnetImpl(const SdxlUnetConfig& config);

  // x: [b, in, h, w] (h, w multiples of 2^(levels-1)); timesteps: [b]; context: [b, tokens,
  // context_dim]; y: [b, adm_in]. Returns [b, out, h, w].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& timesteps, const torch::Tensor& context,
                        const torch::Tensor& y);

  // Recompute each input/middle/output block in backward instead of keeping its activations.
  // `preserveRngState`: the blocks draw random numbers (LoRA dropout), so the recomputation needs
  // the forward's RNG state; without dropout the state is left alone (no host round trip).
  void setGradientCheckpointing(bool enabled, bool preserveRngState = true) {
    gradientCheckpointing_ = enabled;
    preserveRngState_ = preserveRngState;
  }
  bool gradientCheckpointing() const { return gradientCheckpointing_; }
  // cpu_offload_checkpointing: the checkpointed blocks' inputs wait for the backward pass in host
  // memory (less device memory, a copy each way per block).
  void setCheckpointOffload(bool enabled) { checkpointOffload_ = enabled; }

  // The project's fused kernels where a block has one (GEGLU, GroupNorm+SiLU), on CUDA inputs; numerically within
  // the compute dtype's rounding of the stock operators (tests/gpu/fused_kernels_check.cpp). Also self-attention's
  // q/k/v as one GEMM where it applies (CrossAttentionImpl::setJointQkv; any device, plain GEMMs), and every
  // cross-attention's k and v on the context as one, before the blocks (JointContextKv).
  // On CUDA inputs, also the activations channels_last (as setChannelsLast), unless the environment's
  // SINTER_UNET_CHANNELS_LAST=0 (for measuring).
  void setFusedKernels(bool enabled);
  // The activations channels_last (NHWC) on any device: x converted once at the input, every block's
  // convolutions, norms, skips and residual adds in NHWC (cuDNN convolves NHWC without converting;
  // the SpatialTransformers' token views are free), the output contiguous NCHW again. The
  // convolutions' kernels follow the activations' layout at each forward (those that own their storage).
  void setChannelsLast(bool enabled);
  // Whether activations on `device` run channels_last (either switch).
  bool runsChannelsLast(const torch::Device& device) const { return channelsLast_ || (channelsLastOnCuda_ && device.is_cuda()); }

  // The seam where each block runs: eagerly or checkpointed by default, or as the runner given
  // here decides (the compile engine's captured regions). `region` is the block's checkpoint
  // name: "input_blocks.N", "middle_block", "output_blocks.N".
  using BlockRunner = std::function<torch::Tensor(const std::string& region, SdxlUnetBlock& block, const torch::Tensor& h,
                                                  const torch::Tensor& emb, const torch::Tensor& context)>;
  void setBlockRunner(BlockRunner runner) { blockRunner_ = std::move(runner); }
  // Runs one block as the default does (what a BlockRunner falls back to for a region it leaves eager).
  torch::Tensor runBlockDefault(SdxlUnetBlock& block, const torch::Tensor& h, const torch::Tensor& emb, const torch::Tensor& context);
  const std::vector<std::string>& blockRegions() const { return regions_; }

  const SdxlUnetConfig& config() const { return config_; }

  static SdxlUnetConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix = kPrefix);
  void loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix = kPrefix);
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors(const std::string& prefix = kPrefix) const;

  torch::nn::Sequential time_embed{nullptr};  // 0: Linear, 1: SiLU, 2: Linear
  torch::nn::ModuleList label_emb{nullptr};   // 0: Sequential (0: Linear, 1: SiLU, 2: Linear)
  torch::nn::ModuleList input_blocks{nullptr}, output_blocks{nullptr};
  SdxlUnetBlock middle_block{nullptr};
  torch::nn::Sequential out{nullptr};  // 0: GroupNorm32, 1: SiLU, 2: Conv 3x3

 private:
  torch::Tensor runBlock(size_t region, SdxlUnetBlock& block, const torch::Tensor& h, const torch::Tensor& emb,
                         const torch::Tensor& context);
  bool checkpointsBlocks() const;  // whether runBlockDefault recomputes the blocks in this pass's backward

  SdxlUnetConfig config_;
  torch::nn::Sequential labelEmbed_{nullptr};  // label_emb.0
  std::vector<SdxlUnetBlock> inputs_, outputs_;
  bool gradientCheckpointing_ = false;
  bool preserveRngState_ = true;
  bool checkpointOffload_ = false;
  bool fusedOut_ = false;  // `out`'s GroupNorm32 and SiLU as one kernel each way
  bool channelsLast_ = false;        // setChannelsLast: any device
  bool channelsLastOnCuda_ = false;  // setFusedKernels: CUDA inputs
  torch::MemoryFormat convKernelsLayout_ = torch::MemoryFormat::Contiguous;  // as the activations run
  std::optional<bool> convKernelsDecidedFor_;  // whether channels_last was wanted when the layout was decided
  JointContextKv contextKv_;  // the attn2s' k and v, on with the fused kernels
  BlockRunner blockRunner_;
  std::vector<std::string> regions_;  // inputs, middle, outputs in forward order
};
TORCH_MODULE(SdxlUnet);

}  // namespace sinter::models

#include "models/sd3/sd3_mmdit.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/checkpoints/checkpoint_tensors.h"
#include "models/layers/gradient_checkpoint.h"
#include "models/unet/timestep_embedding.h"

namespace sinter::models {

Sd3EmbedderImpl::Sd3EmbedderImpl(int64_t inDim, int64_t hidden) {
  in = Linear(inDim, hidden);
  out = Linear(hidden, hidden);
  register_module("mlp", torch::nn::ModuleList(in, torch::nn::SiLU(), out));
}

torch::Tensor Sd3EmbedderImpl::forward(const torch::Tensor& x) { return out(torch::silu(in(x))); }

Sd3MmditImpl::Sd3MmditImpl(const Sd3MmditConfig& c, bool withBlocks) : config_(c) {
  const int64_t hidden = c.hiddenSize();
  auto xEmbedder = register_module("x_embedder", std::make_shared<torch::nn::Module>());
  x_embedder_proj = xEmbedder->register_module("proj", Conv2d(c.inChannels, hidden, c.patchSize, c.patchSize));
  pos_embed = register_buffer("pos_embed", sd3SincosPosEmbed(hidden, c.posEmbedMaxSize).unsqueeze(0));
  t_embedder = register_module("t_embedder", Sd3Embedder(256, hidden));
  y_embedder = register_module("y_embedder", Sd3Embedder(c.admInChannels, hidden));
  context_embedder = register_module("context_embedder", Linear(c.contextInFeatures, hidden));
  joint_blocks = register_module("joint_blocks", torch::nn::ModuleList());
  for (int64_t i = 0; withBlocks && i < c.depth; ++i) {
    blocks_.push_back(Sd3JointBlock(c, /*last=*/i == c.depth - 1, c.xBlockSelfAttnLayers.count(i) > 0));
    joint_blocks->push_back(blocks_.back());
  }
  auto finalLayer = register_module("final_layer", std::make_shared<torch::nn::Module>());
  final_linear = finalLayer->register_module("linear", Linear(hidden, c.patchSize * c.patchSize * c.outChannels()));
  final_adaLN = Linear(hidden, 2 * hidden);
  finalLayer->register_module("adaLN_modulation", torch::nn::ModuleList(torch::nn::SiLU(), final_adaLN));
}

void Sd3MmditImpl::enableScaledPosEmbed(const std::vector<int64_t>& latentSizes) {
  scaledPosEmbeds_.emplace(config_.hiddenSize(), config_.patchSize, latentSizes);
}

int64_t Sd3MmditImpl::posTableSide(int64_t h, int64_t w) {
  return scaledPosEmbeds_ ? scaledPosEmbeds_->sideFor(h, w) : config_.posEmbedMaxSize;
}

torch::Tensor Sd3MmditImpl::croppedPosEmbed(int64_t h, int64_t w, const Sd3PosEmbedCrop& crop, torch::Device device,
                                            torch::Dtype dtype) {
  // The scaled table is chosen (and, for an image wider than any, made) once; its side follows from it.
  const torch::Tensor table = scaledPosEmbeds_ ? scaledPosEmbeds_->tableFor(h, w, device, dtype) : pos_embed;
  const int64_t max = scaledPosEmbeds_ ? std::llround(std::sqrt(static_cast<double>(table.size(1)))) : config_.posEmbedMaxSize;
  if (h > max || w > max)
    throw std::invalid_argument("SD 3 MMDiT: an image of " + std::to_string(h) + "x" + std::to_string(w) +
                                " patches is larger than its position table (" + std::to_string(max) + "x" +
                                std::to_string(max) + ")");
  const int64_t top = crop.top < 0 ? (max - h) / 2 : crop.top, left = crop.left < 0 ? (max - w) / 2 : crop.left;
  if (top + h > max || left + w > max)
    throw std::invalid_argument("SD 3 MMDiT: a crop at (" + std::to_string(top) + ", " + std::to_string(left) +
                                ") leaves the position table");
  // The stored table is cut before it is cast; a scaled table is kept on the device in the compute dtype.
  return table.view({1, max, max, -1}).slice(1, top, top + h).slice(2, left, left + w).reshape({1, h * w, -1}).to(device, dtype);
}

torch::Tensor Sd3MmditImpl::forward(const torch::Tensor& x, const torch::Tensor& timesteps, const torch::Tensor& y,
                                    const torch::Tensor& context, const Sd3PosEmbedCrop& crop) {
  const int64_t b = x.size(0), H = x.size(2), W = x.size(3), p = config_.patchSize;
  if (x.dim() != 4 || x.size(1) != config_.inChannels || H % p || W % p)
    throw std::invalid_argument("SD 3 MMDiT: latents must be [B, " + std::to_string(config_.inChannels) +
                                ", H, W] with H and W multiples of " + std::to_string(p) + ", not " + c10::str(x.sizes()));
  const int64_t h = H / p, w = W / p;
  torch::Tensor tokens = x_embedder_proj(x).flatten(2).transpose(1, 2) + croppedPosEmbed(h, w, crop, x.device(), x.scalar_type());
  const torch::Tensor c = t_embedder(timestepEmbedding(timesteps, 256).to(x.dtype())) + y_embedder(y);
  torch::Tensor ctx = context_embedder(context);
  const bool checkpointed = gradientCheckpointing_ && is_training() && torch::GradMode::is_enabled();
  for (size_t i = 0; i < blocks_.size(); ++i) {
    Sd3JointBlock& block = blocks_[i];
    if (!checkpointed) {
      std::tie(ctx, tokens) = block(ctx, tokens, c);
      continue;
    }
    // One tensor out of the checkpointed block: [context, x] joined (x alone after the last block).
    const int64_t t = ctx.size(1);
    const bool last = i + 1 == blocks_.size();
    std::vector<torch::Tensor> in{tokens, ctx, c};
    // A reentrant checkpoint's output needs grad only when an input does (sd-scripts' enable_input_require_grads).
    if (!tokens.requires_grad() && !ctx.requires_grad() && !c.requires_grad()) in[0] = in[0].detach().requires_grad_(true);
    const torch::Tensor out = runCheckpointed(
        [&block, last](const std::vector<torch::Tensor>& v) {
          auto [newCtx, newX] = block(v[1], v[0], v[2]);
          return last ? newX : torch::cat({newCtx, newX}, 1);
        },
        in, preserveRngState_, checkpointOffload_);
    if (last) {
      tokens = out;
      ctx = torch::Tensor();
    } else {
      ctx = out.narrow(1, 0, t);
      tokens = out.narrow(1, t, out.size(1) - t);
    }
  }
  // final_layer (UnPatch): modulate(LayerNorm(x), shift, scale), linear, patches back to [B, C, H, W].
  const std::vector<torch::Tensor> shiftScale = final_adaLN(torch::silu(c)).chunk(2, -1);
  const torch::Tensor out = final_linear(sd3Modulate(sd3LayerNorm(tokens), shiftScale[0], shiftScale[1]));
  const int64_t ch = config_.outChannels();
  return out.view({b, h, w, p, p, ch}).permute({0, 5, 1, 3, 2, 4}).reshape({b, ch, H, W});
}

void Sd3MmditImpl::loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  loadModuleFromCheckpoint(*this, file, prefix, "SD 3 MMDiT (" + config_.modelType() + ")");
}

void checkSd3BlocksToSwap(const Sd3MmditConfig& config, int64_t blocksToSwap) {
  const int64_t most = std::max<int64_t>(config.depth - 2, 0);
  if (blocksToSwap < 0 || blocksToSwap > most)
    throw std::invalid_argument("blocks_to_swap = " + std::to_string(blocksToSwap) + ": the MMDiT's " + std::to_string(config.depth) +
                                " joint blocks can swap at most " + std::to_string(most) + " (two stay on the device), as sd-scripts "
                                "asserts: blocks_to_swap up to " + std::to_string(most));
}

void Sd3MmditImpl::enableBlockSwap(int64_t blocksToSwap, const torch::Device& device, torch::ScalarType storedAs) {
  checkSd3BlocksToSwap(config_, blocksToSwap);
  if (blocksToSwap == 0) return;
  std::vector<std::shared_ptr<torch::nn::Module>> blocks;
  for (auto& b : blocks_) blocks.push_back(b.ptr());
  // s blocks swapped: the device holds n - s blocks' weights, 2 of them the ring, so s + 2 stream.
  blockSwap_ = BlockSwap::install(blocks, blocksToSwap + 2, device, storedAs);
}

std::string Sd3MmditImpl::streamedBlocks() const {
  if (!blockSwap_) return "";
  return "joint_blocks." + std::to_string(blockSwap_->firstStreamed()) + "-" + std::to_string(blockSwap_->blockCount() - 1);
}

std::vector<std::pair<std::string, torch::Tensor>> Sd3MmditImpl::checkpointTensors(const std::string& prefix) const {
  return moduleCheckpointTensors(*this, prefix);
}

}  // namespace sinter::models

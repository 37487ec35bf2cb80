#include "models/flux/flux_transformer.h"

#include <algorithm>
#include <stdexcept>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/flux/flux_rope.h"
#include "models/layers/gradient_checkpoint.h"

namespace sinter::models {

namespace {

torch::Tensor optionalInput(const std::vector<torch::Tensor>& inputs, size_t i) {
  return i < inputs.size() ? inputs[i] : torch::Tensor();
}

void requireShape3(const torch::Tensor& t, const char* name, int64_t batch, int64_t last, const char* lastName) {
  if (t.dim() != 3 || t.size(0) != batch || t.size(2) != last)
    throw std::invalid_argument(std::string("FLUX transformer: ") + name + " must be [" + std::to_string(batch) +
                                ", tokens, " + std::to_string(last) + " (" + lastName + ")], got " + c10::str(t.sizes()));
}

void requireVector(const torch::Tensor& t, const char* name, int64_t batch) {
  if (!t.defined() || t.dim() != 1 || t.size(0) != batch)
    throw std::invalid_argument(std::string("FLUX transformer: ") + name + " must be [" + std::to_string(batch) +
                                "], got " + (t.defined() ? c10::str(t.sizes()) : std::string("nothing")));
}

}  // namespace

FluxTransformerImpl::FluxTransformerImpl(const FluxConfig& config) : config_(config) {
  config.validate();
  const int64_t hidden = config.hiddenSize;
  img_in = register_module("img_in", Linear(config.inChannels, hidden));
  if (config.chroma()) {
    distilled_guidance_layer = register_module("distilled_guidance_layer", ChromaApproximator(config));
  } else {
    time_in = register_module("time_in", FluxMlpEmbedder(256, hidden));
    vector_in = register_module("vector_in", FluxMlpEmbedder(config.vecInDim, hidden));
    if (config.guidanceEmbed) guidance_in = register_module("guidance_in", FluxMlpEmbedder(256, hidden));
  }
  txt_in = register_module("txt_in", Linear(config.contextInDim, hidden));
  double_blocks = register_module("double_blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.depth; ++i) {
    doubles_.push_back(FluxDoubleBlock(config));
    double_blocks->push_back(doubles_.back());
    regions_.push_back("double_blocks." + std::to_string(i));
  }
  single_blocks = register_module("single_blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.depthSingleBlocks; ++i) {
    singles_.push_back(FluxSingleBlock(config));
    single_blocks->push_back(singles_.back());
    regions_.push_back("single_blocks." + std::to_string(i));
  }
  final_layer = register_module("final_layer", FluxLastLayer(hidden, config.inChannels, !config.chroma()));
}

torch::Tensor FluxTransformerImpl::runBlock(size_t region, const std::vector<torch::Tensor>& inputs, const BlockBody& body) {
  if (blockRunner_) return blockRunner_(regions_[region], inputs, body);
  return runBlockDefault(inputs, body);
}

void FluxTransformerImpl::setFusedKernels(bool enabled) {
  for (FluxDoubleBlock& block : doubles_) block->fused = enabled;
  for (FluxSingleBlock& block : singles_) block->fused = enabled;
}

FluxBlockSwapSplit fluxBlockSwapSplit(const FluxConfig& config, int64_t blocksToSwap) {
  const FluxBlockSwapSplit split{blocksToSwap / 2, (blocksToSwap - blocksToSwap / 2) * 2};
  if (blocksToSwap < 0 || split.doubles > config.depth - 2 || split.singles > config.depthSingleBlocks - 2) {
    const int64_t most = std::max<int64_t>(0, std::min(2 * (config.depth - 2) + 1, 2 * ((config.depthSingleBlocks - 2) / 2)));
    throw std::invalid_argument("blocks_to_swap = " + std::to_string(blocksToSwap) + " would swap " + std::to_string(split.doubles) +
                                " double and " + std::to_string(split.singles) + " single blocks; this model (" +
                                std::to_string(config.depth) + " double, " + std::to_string(config.depthSingleBlocks) +
                                " single blocks) can swap at most " + std::to_string(std::max<int64_t>(config.depth - 2, 0)) +
                                " and " + std::to_string(std::max<int64_t>(config.depthSingleBlocks - 2, 0)) +
                                ": blocks_to_swap up to " + std::to_string(most));
  }
  return split;
}

void FluxTransformerImpl::enableBlockSwap(int64_t blocksToSwap, const torch::Device& device, torch::ScalarType storedAs) {
  const FluxBlockSwapSplit split = fluxBlockSwapSplit(config_, blocksToSwap);
  const int64_t doubles = split.doubles, singles = split.singles;
  auto asModules = [](auto& blocks) {
    std::vector<std::shared_ptr<torch::nn::Module>> out;
    for (auto& b : blocks) out.push_back(b.ptr());
    return out;
  };
  // s blocks swapped: the device holds n - s blocks' weights, 2 of them the ring, so s + 2 stream.
  if (doubles > 0) doubleSwap_ = BlockSwap::install(asModules(doubles_), doubles + 2, device, storedAs);
  if (singles > 0) singleSwap_ = BlockSwap::install(asModules(singles_), singles + 2, device, storedAs);
}

bool FluxTransformerImpl::streamsWeights(const std::string& name) const {
  const auto depth = static_cast<size_t>(config_.depth);
  const size_t region = static_cast<size_t>(std::find(regions_.begin(), regions_.end(), name) - regions_.begin());
  if (region == regions_.size()) return false;
  if (region < depth) return doubleSwap_ && doubleSwap_->streams(static_cast<int64_t>(region));
  return singleSwap_ && singleSwap_->streams(static_cast<int64_t>(region - depth));
}

std::string FluxTransformerImpl::streamedBlocks() const {
  std::string out;
  auto add = [&](const std::shared_ptr<BlockSwap>& swap, const char* kind) {
    if (!swap) return;
    if (!out.empty()) out += ", ";
    out += std::string(kind) + "." + std::to_string(swap->firstStreamed()) + "-" + std::to_string(swap->blockCount() - 1);
  };
  add(doubleSwap_, "double_blocks");
  add(singleSwap_, "single_blocks");
  return out;
}

torch::Tensor FluxTransformerImpl::runBlockDefault(const std::vector<torch::Tensor>& inputs, const BlockBody& body) {
  if (gradientCheckpointing_ && is_training() && torch::GradMode::is_enabled()) {
    // A reentrant checkpoint's output needs grad only when an input does; with only LoRA
    // parameters trainable the first block's input does not, so make it (sd-scripts'
    // enable_input_require_grads).
    bool anyInputNeedsGrad = false;
    for (const torch::Tensor& t : inputs) anyInputNeedsGrad = anyInputNeedsGrad || (t.defined() && t.requires_grad());
    std::vector<torch::Tensor> in = inputs;
    if (!anyInputNeedsGrad) in[0] = in[0].detach().requires_grad_(true);
    return runCheckpointed(body, in, preserveRngState_, checkpointOffload_);
  }
  return body(inputs);
}

torch::Tensor FluxTransformerImpl::forward(const torch::Tensor& img, const torch::Tensor& imgIds, const torch::Tensor& txt,
                                           const torch::Tensor& txtIds, const torch::Tensor& timesteps,
                                           const torch::Tensor& y, const torch::Tensor& guidance,
                                           const torch::Tensor& txtMask) {
  if (img.dim() != 3 || img.size(2) != config_.inChannels)
    throw std::invalid_argument("FLUX transformer: img must be [batch, tokens, " + std::to_string(config_.inChannels) +
                                "], got " + c10::str(img.sizes()));
  const int64_t b = img.size(0), l = img.size(1), axes = static_cast<int64_t>(config_.axesDim.size());
  requireShape3(txt, "txt", b, config_.contextInDim, "context");
  const int64_t t = txt.size(1);
  requireShape3(imgIds, "img_ids", b, axes, "position axes");
  requireShape3(txtIds, "txt_ids", b, axes, "position axes");
  if (imgIds.size(1) != l || txtIds.size(1) != t)
    throw std::invalid_argument("FLUX transformer: img_ids " + c10::str(imgIds.sizes()) + " and txt_ids " +
                                c10::str(txtIds.sizes()) + " must have img's " + std::to_string(l) + " and txt's " +
                                std::to_string(t) + " tokens");
  requireVector(timesteps, "timesteps", b);
  const bool chroma = config_.chroma();
  if (!chroma && (y.dim() != 2 || y.size(0) != b || y.size(1) != config_.vecInDim))
    throw std::invalid_argument("FLUX transformer: y must be [" + std::to_string(b) + ", " +
                                std::to_string(config_.vecInDim) + "], got " + c10::str(y.sizes()));
  if (chroma) requireVector(guidance, "guidance (Chroma's approximator takes it)", b);
  else if (config_.guidanceEmbed) requireVector(guidance, "guidance (a guidance-distilled model, FLUX.1 dev, needs it)", b);
  if (txtMask.defined() && (txtMask.dim() != 2 || txtMask.size(0) != b || txtMask.size(1) != t))
    throw std::invalid_argument("FLUX transformer: the text mask must be [" + std::to_string(b) + ", " +
                                std::to_string(t) + "], got " + c10::str(txtMask.sizes()));
  if (chroma && !txtMask.defined())
    throw std::invalid_argument("Chroma transformer: it needs the T5 attention mask (sd-scripts requires apply_t5_attn_mask for Chroma)");

  const torch::ScalarType dtype = img.scalar_type();
  // FLUX.1: one vector for every block; Chroma: each block's own rows of the approximator's output.
  torch::Tensor vec, modulations;
  if (chroma) {
    modulations = distilled_guidance_layer(timesteps, guidance, dtype);
  } else {
    vec = time_in(fluxTimestepEmbedding(timesteps).to(dtype));
    if (config_.guidanceEmbed) vec = vec + guidance_in(fluxTimestepEmbedding(guidance).to(dtype));
    vec = vec + vector_in(y.to(dtype));
  }
  auto rows = [&](ChromaModulationSlices slice) { return modulations.narrow(1, slice.start, slice.count); };
  torch::Tensor imgH = img_in(img);
  torch::Tensor txtH = txt_in(txt.to(dtype));

  // RoPE over the joint sequence [txt, img], computed once for every block.
  const torch::Tensor rotations = fluxRopeRotations(torch::cat({txtIds, imgIds}, 1), config_.axesDim, config_.theta);
  torch::Tensor mask;
  if (txtMask.defined()) {
    torch::Tensor textKeys = txtMask.to(torch::kBool);
    if (chroma) {  // the real tokens and one padding token: txt_seq_len = min(count + 1, T)
      const torch::Tensor length = (textKeys.sum(1, /*keepdim=*/true) + 1).clamp_max(t);
      textKeys = torch::arange(t, txtMask.options().dtype(torch::kLong)).unsqueeze(0) < length;
    }
    mask = torch::cat({textKeys, torch::ones({b, l}, txtMask.options().dtype(torch::kBool))}, 1).view({b, 1, 1, t + l});
  }
  auto withMask = [&](std::vector<torch::Tensor> inputs) {
    if (mask.defined()) inputs.push_back(mask);
    return inputs;
  };

  size_t region = 0;
  torch::Tensor joint;  // [B, T + L, hidden]: txt then img
  for (FluxDoubleBlock& block : doubles_) {
    FluxDoubleBlock blk = block;
    const int64_t i = static_cast<int64_t>(region);
    const torch::Tensor blockVec =
        chroma ? torch::cat({rows(chromaDoubleImgSlice(config_, i)), rows(chromaDoubleTxtSlice(config_, i))}, 1) : vec;
    joint = runBlock(region++, withMask({imgH, txtH, blockVec, rotations}), [blk](const std::vector<torch::Tensor>& in) mutable {
      const auto [imgOut, txtOut] = blk(in[0], in[1], in[2], in[3], optionalInput(in, 4));
      return torch::cat({txtOut, imgOut}, 1);
    });
    txtH = joint.narrow(1, 0, t);
    imgH = joint.narrow(1, t, l);
  }
  if (!joint.defined()) joint = torch::cat({txtH, imgH}, 1);
  for (FluxSingleBlock& block : singles_) {
    FluxSingleBlock blk = block;
    const int64_t i = static_cast<int64_t>(region) - config_.depth;
    const torch::Tensor blockVec = chroma ? rows(chromaSingleBlockSlice(config_, i)) : vec;
    joint = runBlock(region++, withMask({joint, blockVec, rotations}), [blk](const std::vector<torch::Tensor>& in) mutable {
      return blk(in[0], in[1], in[2], optionalInput(in, 3));
    });
  }
  return final_layer(joint.narrow(1, t, l), chroma ? rows(chromaLastLayerSlice(config_)) : vec);
}

std::string FluxTransformerImpl::checkpointPrefix(const io::SafetensorsFile& file) {
  const std::string comfy = "model.diffusion_model.";
  return file.has(comfy + "img_in.weight") ? comfy : "";
}

FluxConfig FluxTransformerImpl::inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  return FluxConfig::inferFromCheckpoint(file, prefix);
}

void FluxTransformerImpl::loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  loadModuleFromCheckpoint(*this, file, prefix,
                           config_.chroma() ? std::string("Chroma transformer")
                                            : std::string("FLUX.1 ") + fluxVariantName(config_.variant()) + " transformer");
}

std::vector<std::pair<std::string, torch::Tensor>> FluxTransformerImpl::checkpointTensors(const std::string& prefix) const {
  return moduleCheckpointTensors(*this, prefix);
}

}  // namespace sinter::models

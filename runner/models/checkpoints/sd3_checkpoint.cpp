#include "models/checkpoints/sd3_checkpoint.h"

#include <map>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/checkpoints/random_parts_writer.h"
#include "models/layers/parameters_from_checkpoint.h"
#include "models/sd3/sd3_mmdit_block.h"

namespace sinter::models {

bool isSd3Checkpoint(const io::SafetensorsFile& file) {
  return file.has(std::string(kSd3MmditPrefix) + "x_embedder.proj.weight") &&
         file.hasKeyStartingWith(std::string(kSd3MmditPrefix) + "joint_blocks.");
}

bool sd3CheckpointHoldsT5xxl(const io::SafetensorsFile& file) {
  return file.has(std::string(kSd3T5xxlPrefix) + "encoder.block.0.layer.0.SelfAttention.k.weight");
}

FluxAutoencoderConfig sd3VaeConfig(const FluxAutoencoderConfig& sizes) {
  FluxAutoencoderConfig c = sizes;
  c.scaleFactor = 1.5305;
  c.shiftFactor = 0.0609;
  return c;
}

const char* sd3VariantName(Sd3Variant v) {
  switch (v) {
    case Sd3Variant::Medium35: return "3.5-medium";
    case Sd3Variant::Large35: return "3.5-large";
    case Sd3Variant::Medium: break;
  }
  return "medium";
}

Sd3MmditConfig sd3MmditConfig(Sd3Variant v) {
  switch (v) {
    case Sd3Variant::Medium35: return Sd3MmditConfig::sd35Medium();
    case Sd3Variant::Large35: return Sd3MmditConfig::sd35Large();
    case Sd3Variant::Medium: break;
  }
  return Sd3MmditConfig::sd3Medium();
}

std::string sd3ModelSpecArchitecture(const Sd3MmditConfig& config) {
  // sd-scripts' sai_model_spec: ARCH_SD3_M ("stable-diffusion-3") + "-" + the MMDiT's model_type.
  return "stable-diffusion-3-" + config.modelType();
}

Sd3Mmdit loadSd3Mmdit(const io::SafetensorsFile& file, torch::Dtype dtype) {
  if (!isSd3Checkpoint(file)) {
    const std::string hint = describeCheckpointFamily(file);
    throw CheckpointError(file.path() + ": not an SD 3 checkpoint (no " + kSd3MmditPrefix + "joint_blocks.* keys)" +
                          (hint.empty() ? "" : "; " + hint));
  }
  Sd3Mmdit model{nullptr};
  {
    const ParametersFromCheckpoint fromFile;  // the file's values overwrite them: no random initial values drawn
    model = Sd3Mmdit(Sd3MmditConfig::inferFromCheckpoint(file, kSd3MmditPrefix));
  }
  model->to(dtype);
  model->loadFromCheckpoint(file, kSd3MmditPrefix);
  return model;
}

FluxAutoencoder loadSd3Vae(const io::SafetensorsFile& file, torch::Dtype dtype) {
  FluxAutoencoder vae{nullptr};
  {
    const ParametersFromCheckpoint fromFile;
    vae = FluxAutoencoder(sd3VaeConfig(FluxAutoencoderConfig::inferFromCheckpoint(file, kSd3VaePrefix)));
  }
  vae->to(dtype);
  vae->loadFromCheckpoint(file, kSd3VaePrefix);
  return vae;
}

namespace {

using Tensors = std::vector<std::pair<std::string, torch::Tensor>>;

Tensors prefixed(const Tensors& tensors, const std::string& prefix) {
  Tensors out;
  for (const auto& [key, t] : tensors) out.emplace_back(prefix + key, t);
  return out;
}

}  // namespace

void writeRandomSd3Checkpoint(const std::string& path, Sd3Variant variant, bool tiny, uint64_t seed) {
  const Sd3MmditConfig mmdit = tiny ? Sd3MmditConfig::tiny() : sd3MmditConfig(variant);
  const FluxAutoencoderConfig vae = sd3VaeConfig(tiny ? FluxAutoencoderConfig::tiny() : FluxAutoencoderConfig::full());
  const ClipTextConfig clipL = tiny ? ClipTextConfig::tinySd3ClipL() : ClipTextConfig::sd3ClipL();
  const ClipTextConfig clipG = tiny ? ClipTextConfig::tinySd3ClipG() : ClipTextConfig::sd3ClipG();
  // Parts: 0 the MMDiT outside its blocks, 1..depth the joint blocks, then the VAE, CLIP-L, CLIP-G;
  // part p built right after torch::manual_seed(seed + p).
  const int64_t parts = mmdit.depth + 4;
  auto buildPart = [&](int64_t part) -> Tensors {
    torch::manual_seed(seed + static_cast<uint64_t>(part));
    if (part == 0) return Sd3Mmdit(mmdit, /*withBlocks=*/false)->checkpointTensors(kSd3MmditPrefix);
    if (part <= mmdit.depth) {
      const int64_t i = part - 1;
      Sd3JointBlock block(mmdit, i == mmdit.depth - 1, mmdit.xBlockSelfAttnLayers.count(i) > 0);
      return moduleCheckpointTensors(*block, std::string(kSd3MmditPrefix) + "joint_blocks." + std::to_string(i) + ".");
    }
    if (part == mmdit.depth + 1) return FluxAutoencoder(vae)->checkpointTensors(kSd3VaePrefix);
    if (part == mmdit.depth + 2) return prefixed(ClipTextModel(clipL)->checkpointTensors(""), kSd3ClipLPrefix);
    return prefixed(ClipTextModel(clipG)->checkpointTensors(""), kSd3ClipGPrefix);
  };
  const std::map<std::string, std::string> metadata = {
      {"modelspec.architecture", sd3ModelSpecArchitecture(mmdit)},
      {"modelspec.title", std::string("Sinter random SD ") + (tiny ? "3 (tiny)" : sd3VariantName(variant))},
      {"sinter.random_seed", std::to_string(seed)},
  };
  writeRandomParts(path, parts, buildPart, tiny ? torch::kFloat32 : torch::kBFloat16, metadata);
}

}  // namespace sinter::models

#include "models/checkpoints/flux_random_checkpoint.h"

#include <map>
#include <optional>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/flux/flux_double_block.h"
#include "models/flux/flux_single_block.h"
#include "models/checkpoints/random_parts_writer.h"

namespace sinter::models {

namespace {

using Tensors = std::vector<std::pair<std::string, torch::Tensor>>;

int64_t partCount(const FluxConfig& c) { return 1 + c.depth + c.depthSingleBlocks; }

// Part p's checkpoint entries (see the header), freshly built from the seed.
Tensors randomPart(const FluxConfig& config, uint64_t seed, int64_t part) {
  torch::manual_seed(seed + static_cast<uint64_t>(part));
  if (part == 0) {
    FluxConfig stem = config;  // the same model without blocks: exactly the keys outside them
    stem.depth = 0;
    stem.depthSingleBlocks = 0;
    return FluxTransformer(stem)->checkpointTensors();
  }
  if (part <= config.depth)
    return moduleCheckpointTensors(*FluxDoubleBlock(config), "double_blocks." + std::to_string(part - 1) + ".");
  return moduleCheckpointTensors(*FluxSingleBlock(config),
                                 "single_blocks." + std::to_string(part - 1 - config.depth) + ".");
}

}  // namespace

FluxTransformer buildRandomFluxTransformer(const FluxConfig& config, uint64_t seed) {
  FluxTransformer model(config);
  std::map<std::string, torch::Tensor> targets;
  for (auto& [key, t] : model->checkpointTensors()) targets[key] = t;
  torch::NoGradGuard noGrad;
  for (int64_t p = 0; p < partCount(config); ++p)
    for (const auto& [key, t] : randomPart(config, seed, p)) targets.at(key).copy_(t);
  return model;
}

FluxAutoencoder buildRandomFluxAutoencoder(const FluxAutoencoderConfig& config, uint64_t seed) {
  torch::manual_seed(seed);
  return FluxAutoencoder(config);
}

void writeRandomFluxTransformer(const std::string& path, const FluxConfig& config, uint64_t seed, torch::Dtype dtype) {
  config.validate();
  // sai_model_spec's architectures: flux-1-dev, flux-1-schnell, and "chroma" (ARCH_FLUX_1_CHROMA).
  const bool chroma = config.chroma();
  const std::map<std::string, std::string> metadata = {
      {"modelspec.architecture", chroma ? std::string("chroma") : std::string("flux-1-") + fluxVariantName(config.variant())},
      {"modelspec.title", chroma ? std::string("Sinter random Chroma transformer")
                                 : std::string("Sinter random FLUX.1 ") + fluxVariantName(config.variant()) + " transformer"},
      {"sinter.random_seed", std::to_string(seed)},
  };
  writeRandomParts(path, partCount(config), [&](int64_t part) { return randomPart(config, seed, part); }, dtype, metadata);
}

void writeRandomFluxAutoencoder(const std::string& path, const FluxAutoencoderConfig& config, uint64_t seed,
                                torch::Dtype dtype) {
  config.validate();
  torch::NoGradGuard noGrad;
  const Tensors tensors = buildRandomFluxAutoencoder(config, seed)->checkpointTensors();
  std::vector<io::TensorDeclaration> entries;
  for (const auto& [key, t] : tensors) entries.push_back({key, storedType(t, dtype), t.sizes().vec()});
  io::writeSafetensorsStreaming(path, entries,
                                {{"modelspec.title", "Sinter random FLUX.1 autoencoder"},
                                 {"sinter.random_seed", std::to_string(seed)}},
                                [&](size_t index) {
                                  const torch::Tensor& t = tensors[index].second;
                                  return t.to(storedType(t, dtype));
                                });
}

void writeRandomFluxTransformer(const std::string& path, bool tiny, bool dev, uint64_t seed) {
  if (tiny)
    writeRandomFluxTransformer(path, FluxConfig::tiny(dev), seed, torch::kFloat32);
  else
    writeRandomFluxTransformer(path, dev ? FluxConfig::dev() : FluxConfig::schnell(), seed, torch::kBFloat16);
}

void writeRandomFluxAutoencoder(const std::string& path, bool tiny, uint64_t seed) {
  writeRandomFluxAutoencoder(path, tiny ? FluxAutoencoderConfig::tiny() : FluxAutoencoderConfig::full(), seed,
                             torch::kFloat32);
}

}  // namespace sinter::models

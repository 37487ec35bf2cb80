#include "models/checkpoints/random_checkpoint.h"

#include <functional>
#include <map>

#include "io/safetensors.h"
#include "models/checkpoints/random_parts_writer.h"

namespace sinter::models {

namespace {

using Tensors = std::vector<std::pair<std::string, torch::Tensor>>;

// One model's checkpoint entries, built on demand from the seed (the same seed, the same weights).
using ModelBuilder = std::function<Tensors()>;

std::vector<ModelBuilder> modelBuilders(const SdxlCheckpointConfig& config, uint64_t seed) {
  return {
      [=] { return buildRandomSdxlUnet(config, seed)->checkpointTensors(SdxlUnetImpl::kPrefix); },
      [=] { return buildRandomSdxlVae(config, seed)->checkpointTensors(SdxlVaeImpl::kPrefix); },
      [=] { return buildRandomSdxlClipL(config, seed)->checkpointTensors(ClipTextModelImpl::kSdxlPrefix); },
      [=] { return buildRandomSdxlBigG(config, seed)->checkpointTensors(OpenClipTextModelImpl::kSdxlPrefix); },
  };
}

}  // namespace

void writeRandomSdxlCheckpoint(const std::string& path, const SdxlCheckpointConfig& config, uint64_t seed,
                               torch::Dtype dtype) {
  config.validate();
  torch::NoGradGuard noGrad;
  const std::vector<ModelBuilder> builders = modelBuilders(config, seed);

  // First pass: names and shapes for the header, one model alive at a time.
  std::vector<io::TensorDeclaration> entries;
  std::vector<std::pair<size_t, size_t>> source;  // (model, index within the model's entries)
  for (size_t m = 0; m < builders.size(); ++m) {
    const Tensors tensors = builders[m]();
    for (size_t i = 0; i < tensors.size(); ++i) {
      entries.push_back({tensors[i].first, storedType(tensors[i].second, dtype), tensors[i].second.sizes().vec()});
      source.emplace_back(m, i);
    }
  }

  // Second pass: the writer asks for tensors in file order (grouped by model, since keys sort by
  // prefix); a model is rebuilt only when the order moves to another one.
  size_t current = builders.size();
  Tensors currentTensors;
  const std::map<std::string, std::string> metadata = {
      {"modelspec.architecture", "stable-diffusion-xl-v1-base"},
      {"modelspec.title", "Sinter random SDXL checkpoint"},
      {"sinter.random_seed", std::to_string(seed)},
  };
  io::writeSafetensorsStreaming(path, entries, metadata, [&](size_t index) {
    const auto [model, i] = source[index];
    if (model != current) {
      currentTensors.clear();  // free the previous model first
      currentTensors = builders[model]();
      current = model;
    }
    const torch::Tensor& t = currentTensors[i].second;
    return t.to(storedType(t, dtype));
  });
}

void writeRandomSdxlCheckpoint(const std::string& path, bool tiny, uint64_t seed) {
  if (tiny)
    writeRandomSdxlCheckpoint(path, SdxlCheckpointConfig::tiny(), seed, torch::kFloat32);
  else
    writeRandomSdxlCheckpoint(path, SdxlCheckpointConfig::full(), seed, torch::kFloat16);
}

}  // namespace sinter::models

#include "models/checkpoints/text_encoder_random_checkpoint.h"

#include "models/checkpoints/checkpoint_tensors.h"
#include "models/checkpoints/random_parts_writer.h"

namespace sinter::models {

void writeRandomClipTextModel(const std::string& path, const ClipTextConfig& config, uint64_t seed, torch::Dtype dtype) {
  config.validate();
  writeRandomParts(
      path, 1,
      [&](int64_t) {
        torch::manual_seed(seed);
        return ClipTextModel(config)->checkpointTensors("");
      },
      dtype, {{"modelspec.title", "Sinter random CLIP-L text encoder"}, {"sinter.random_seed", std::to_string(seed)}});
}

void writeRandomT5Encoder(const std::string& path, const T5EncoderConfig& config, uint64_t seed, torch::Dtype dtype) {
  // Part 0: the embedding and the final norm (the same encoder without blocks); part 1 + i: block i.
  const auto buildPart = [&](int64_t part) -> NamedWeights {
    torch::manual_seed(seed + static_cast<uint64_t>(part));
    if (part == 0) {
      T5EncoderConfig stem = config;
      stem.layers = 0;
      return T5Encoder(stem)->checkpointTensors();
    }
    const int64_t i = part - 1;
    const std::string block = "encoder.block." + std::to_string(i) + ".layer.";
    NamedWeights out = moduleCheckpointTensors(*T5LayerSelfAttention(config, /*hasRelativeBias=*/i == 0), block + "0.");
    for (auto& entry : moduleCheckpointTensors(*T5LayerFF(config), block + "1.")) out.push_back(std::move(entry));
    return out;
  };
  writeRandomParts(path, 1 + config.layers, buildPart, dtype,
                   {{"modelspec.title", "Sinter random T5 v1.1 encoder"}, {"sinter.random_seed", std::to_string(seed)}});
}

void writeRandomClipL(const std::string& path, bool tiny, uint64_t seed) {
  if (tiny) writeRandomClipTextModel(path, ClipTextConfig::tinyClipL(), seed, torch::kFloat32);
  else writeRandomClipTextModel(path, ClipTextConfig::sdxlClipL(), seed, torch::kHalf);
}

void writeRandomT5Xxl(const std::string& path, bool tiny, uint64_t seed) {
  if (tiny) writeRandomT5Encoder(path, T5EncoderConfig::tiny(), seed, torch::kFloat32);
  else writeRandomT5Encoder(path, T5EncoderConfig::xxl(), seed, torch::kHalf);
}

}  // namespace sinter::models

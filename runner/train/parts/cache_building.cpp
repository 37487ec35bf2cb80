#include "train/parts/cache_building.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <vector>

#include "train/base/device_info.h"
#include "train/capture/graphed_encoder.h"

namespace sinter::train {

data::LatentCache buildLatentCache(const data::Dataset& dataset, const data::LatentCacheOptions& options, const LatentEncoder& encoder,
                                   torch::Device device, std::uint64_t seed, HostParking& parking) {
  spdlog::info("caching latents");
  std::optional<CachingStage> stage;
  if (encoder.staged) stage.emplace("the " + encoder.name, std::vector<torch::nn::Module*>{encoder.model}, device);
  at::Generator generator = makeGenerator(device, seed);
  GraphedEncoder encode(
      encoder.name, device, [&](const std::vector<torch::Tensor>& in) { return std::vector<torch::Tensor>{encoder.encode(in[0], generator)}; },
      encoder.capture, encoder.captureLimit, {generator});
  data::LatentCacheStats stats;
  data::LatentCache cache = data::LatentCache::build(
      dataset,
      [&](const torch::Tensor& images) {
        if (stage) stage->onDevice();
        return encode({images.to(device)})[0].to(torch::kCPU, torch::kFloat32);
      },
      options, &stats);
  spdlog::info("latents: {} encoded, {} read from disk", stats.encoded, stats.loadedFromDisk);
  parking.park(encoder.name, *encoder.model);
  return cache;
}

data::TextCache buildTextCache(const data::Dataset& dataset, const data::TextCacheOptions& options, CachingStage* stage,
                               const data::TextEncoder& encode, const std::string& logLine) {
  spdlog::info("{}", logLine);
  data::TextCacheStats stats;
  torch::NoGradGuard noGrad;
  data::TextCache cache = data::TextCache::build(
      dataset,
      [&](const std::vector<std::string>& captions) {
        if (stage) stage->onDevice();
        return encode(captions);
      },
      options, &stats);
  spdlog::info("text encoder outputs: {} encoded, {} read from disk", stats.encoded, stats.loadedFromDisk);
  return cache;
}

}  // namespace sinter::train

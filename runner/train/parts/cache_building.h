#pragma once
// The caches a family builds before training, built the same way for every family: the latents
// (cache_latents) and the text encoders' outputs (cache_text_encoder_outputs), each logged as
// sd-scripts logs it, with the stage's models brought to the device when the first thing is encoded
// (a staged start, base/caching_stage.h: caches read whole from disk move nothing). How a family
// encodes is its own, and so is which text encoders wait in host memory after (base/host_parking.h).
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>

#include "data/latent_cache.h"
#include "data/text_cache.h"
#include "train/base/caching_stage.h"
#include "train/base/host_parking.h"

namespace sinter::train {

// How a family's latents are made for the cache (cache_latents).
struct LatentEncoder {
  std::string name;  // "VAE", "AE": the log's, the graph's and the host parking's
  torch::nn::Module* model = nullptr;
  // Images on the device to their latents, drawing the posterior's noise from `generator`.
  std::function<torch::Tensor(const torch::Tensor& images, at::Generator& generator)> encode;
  bool staged = true;   // brought to the device when first used (false: it is there already)
  bool capture = false;  // a CUDA graph per batch shape, where the compile plan captures the VAE
  int captureLimit = 0;
};

// The latent cache, encoded with a generator seeded by `seed`; the encoder waits in host memory
// after (the step reads the latents; samples bring it back).
data::LatentCache buildLatentCache(const data::Dataset& dataset, const data::LatentCacheOptions& options, const LatentEncoder& encoder,
                                   torch::Device device, std::uint64_t seed, HostParking& parking);

// `encode`: captions to the outputs the step reads (float32 tensors on the host, by name); run
// without gradients.
data::TextCache buildTextCache(const data::Dataset& dataset, const data::TextCacheOptions& options, CachingStage* stage,
                               const data::TextEncoder& encode, const std::string& logLine = "caching text encoder outputs");

}  // namespace sinter::train

#pragma once
// Latents cached once before training, in memory or on disk beside each image
// ("<stem>_<w>x<h>_sinter_sdxl.safetensors"). A disk cache is reused only when the image file
// (size, mtime) and every setting that shaped the latents (bucket, resized size, flip, crop,
// resize filter, encoder identity, the loss mask's source and mask file) match; otherwise it is
// encoded again and rewritten atomically. A loss mask (data/loss_mask.h) is cached with its
// latents at the bucket size, as sd-scripts keeps "alpha_mask" in its latent files.
#include <torch/torch.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "data/buckets.h"
#include "data/dataset.h"

namespace sinter::data {

// [B, 3, H, W] images in [-1, 1] -> [B, C, H/8, W/8] latents (the VAE encoder, already scaled).
using ImageEncoder = std::function<torch::Tensor(const torch::Tensor& images)>;

struct LatentCacheOptions {
  bool toDisk = false;
  std::string encoderIdentity;  // changes whenever the encoder would give other latents
  int batchSize = 1;            // vae_batch_size
  int workers = 1;              // decode/resize threads
  int64_t downscale = 8;        // the encoder's pixels per latent (its config's downscale(): 8 at full size)
};

struct CachedLatent {
  torch::Tensor latents;         // [C, h, w] float32 on the CPU
  torch::Tensor flippedLatents;  // of the mirrored image; defined when the subset has flip_aug
  torch::Tensor mask;            // [H, W] float32 in [0, 1] at the bucket size; defined with a loss mask
                                 // (mirrored where the flipped latents are used)
  Resolution originalSize;
  CropLtrb crop;
};

struct LatentCacheStats {
  size_t encoded = 0;
  size_t loadedFromDisk = 0;
};

std::string latentCachePath(const std::string& imagePath, Resolution bucket);

class LatentCache {
 public:
  // Why `dataset` cannot have cached latents (a subset with random_crop or color_aug, which draw
  // anew every epoch; sd-scripts refuses them too), or "" when it can. build() throws it; the
  // preflight reports it.
  static std::string refusal(const Dataset& dataset);
  // Encodes or loads every image in use. Throws DatasetError with refusal()'s reason and for images
  // that fail to decode.
  static LatentCache build(const Dataset& dataset, const ImageEncoder& encode, const LatentCacheOptions& options,
                           LatentCacheStats* stats = nullptr);

  bool has(size_t imageIndex) const { return imageIndex < entries_.size() && entries_[imageIndex].has_value(); }
  const CachedLatent& get(size_t imageIndex) const;

 private:
  std::vector<std::optional<CachedLatent>> entries_;
};

}  // namespace sinter::data

#include "data/latent_cache.h"

#include <cstdio>
#include <filesystem>
#include <map>

#include "data/file_fingerprint.h"
#include "data/image_tensor.h"
#include "data/loss_mask.h"
#include "data/parallel_for.h"
#include "io/safetensors.h"

namespace sinter::data {
namespace {

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Everything that shaped the latents; a disk cache is used only when all of it matches.
std::map<std::string, std::string> expectedMetadata(const ImageEntry& e, const SubsetSettings& s,
                                                    const LatentCacheOptions& o) {
  const CropLtrb crop = cropLtrb(e.choice.bucket, {e.size.width, e.size.height});
  std::string mask = "none";
  switch (maskSourceOf(s)) {
    case MaskSource::None: break;
    case MaskSource::Alpha: mask = "alpha"; break;
    case MaskSource::ConditioningImage: mask = "image:" + e.maskPath + ":" + fingerprintOf(e.maskPath).toString(); break;
  }
  return {
      {"sinter.cache", "latents/2"},  // 2: the loss mask ("alpha_mask" and sinter.mask)
      {"sinter.mask", mask},
      {"sinter.image", fingerprintOf(e.path).toString()},
      {"sinter.bucket", toString(e.choice.bucket)},
      {"sinter.resized", toString(e.choice.resized)},
      {"sinter.original_size", toString({e.size.width, e.size.height})},
      {"sinter.flip", s.flipAug ? "1" : "0"},
      {"sinter.crop", "center"},
      {"sinter.crop_ltrb", exact(crop.left) + "," + exact(crop.top) + "," + exact(crop.right) + "," + exact(crop.bottom)},
      {"sinter.resize_filter", std::to_string(static_cast<int>(s.resizeFilter))},
      {"sinter.encoder", o.encoderIdentity},
  };
}

bool sameMetadata(const std::map<std::string, std::string>& stored, const std::map<std::string, std::string>& expected) {
  for (const auto& [k, v] : expected) {
    const auto it = stored.find(k);
    if (it == stored.end() || it->second != v) return false;
  }
  return true;
}

std::optional<CachedLatent> loadIfValid(const std::string& path, const std::map<std::string, std::string>& expected,
                                        bool flip, bool masked, const ImageEntry& e, int64_t downscale) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  try {
    io::SafetensorsFile file(path);
    if (!sameMetadata(file.metadata(), expected) || !file.has("latents") || (flip && !file.has("latents_flipped")))
      return std::nullopt;
    CachedLatent c;
    c.latents = file.tensor("latents").to(torch::kFloat32).clone();
    if (c.latents.dim() != 3 || c.latents.size(1) * downscale != e.choice.bucket.height ||
        c.latents.size(2) * downscale != e.choice.bucket.width)
      return std::nullopt;
    if (flip) c.flippedLatents = file.tensor("latents_flipped").to(torch::kFloat32).clone();
    if (masked) {
      if (!file.has("alpha_mask")) return std::nullopt;
      c.mask = file.tensor("alpha_mask").to(torch::kFloat32).clone();
      if (c.mask.dim() != 2 || c.mask.size(0) != e.choice.bucket.height || c.mask.size(1) != e.choice.bucket.width)
        return std::nullopt;
    }
    c.originalSize = {e.size.width, e.size.height};
    c.crop = cropLtrb(e.choice.bucket, c.originalSize);
    return c;
  } catch (const io::SafetensorsError&) {
    return std::nullopt;  // unreadable or from another version: encode again and overwrite
  }
}

}  // namespace

std::string latentCachePath(const std::string& imagePath, Resolution bucket) {
  const std::filesystem::path p(imagePath);
  return (p.parent_path() / (p.stem().string() + "_" + toString(bucket) + "_sinter_sdxl.safetensors")).string();
}

const CachedLatent& LatentCache::get(size_t imageIndex) const {
  if (!has(imageIndex)) throw std::out_of_range("no cached latents for image " + std::to_string(imageIndex));
  return *entries_[imageIndex];
}

std::string LatentCache::refusal(const Dataset& dataset) {
  for (const auto& d : dataset.datasets)
    for (const auto& s : d.subsets)
      if (s.randomCrop || s.colorAug)
        return std::string("cache_latents cannot be used with ") + (s.randomCrop ? "random_crop" : "color_aug") + " (" +
               s.imageDir + "): the cache would keep one " + (s.randomCrop ? "crop" : "colouring") +
               " for every epoch, as sd-scripts refuses it";
  return "";
}

LatentCache LatentCache::build(const Dataset& dataset, const ImageEncoder& encode, const LatentCacheOptions& options,
                               LatentCacheStats* stats) {
  if (const std::string why = refusal(dataset); !why.empty()) throw DatasetError(why);
  LatentCache cache;
  cache.entries_.resize(dataset.images.size());
  LatentCacheStats local;
  // By bucket, so batches share a shape; held-out images after all others, so that the VAE's draws
  // for the training images are the same as without validation_split.
  std::map<std::pair<bool, Resolution>, std::vector<size_t>> toEncode;
  std::vector<std::map<std::string, std::string>> metadata(dataset.images.size());
  for (size_t i = 0; i < dataset.images.size(); ++i) {
    const ImageEntry& e = dataset.images[i];
    if (e.repeats <= 0) continue;
    const SubsetSettings& s = dataset.subsetOf(e);
    if (options.toDisk) {
      metadata[i] = expectedMetadata(e, s, options);
      if (auto c = loadIfValid(latentCachePath(e.path, e.choice.bucket), metadata[i], s.flipAug,
                               maskSourceOf(s) != MaskSource::None, e, options.downscale)) {
        cache.entries_[i] = std::move(c);
        ++local.loadedFromDisk;
        continue;
      }
    }
    toEncode[{e.validation, e.choice.bucket}].push_back(i);
  }

  const size_t batchSize = static_cast<size_t>(std::max(1, options.batchSize));
  for (const auto& [key, indices] : toEncode) {
    for (size_t start = 0; start < indices.size(); start += batchSize) {
      const std::vector<size_t> batch(indices.begin() + static_cast<long>(start),
                                      indices.begin() + static_cast<long>(std::min(indices.size(), start + batchSize)));
      std::vector<torch::Tensor> images(batch.size()), flipped(batch.size()), masks(batch.size());
      parallelFor(batch.size(), options.workers, [&](size_t k) {
        const ImageEntry& e = dataset.images[batch[k]];
        const SubsetSettings& s = dataset.subsetOf(e);
        Rng unused(0);  // centre crops only
        MaskedImage img;
        try {
          img = resizeAndCrop(loadMaskedImage(e, s), e.choice, false, unused, s.resizeFilter);
        } catch (const ImageError& err) {
          throw DatasetError(std::string("cannot cache latents: ") + err.what());
        }
        images[k] = imageToTensor(img.rgb);
        if (s.flipAug) flipped[k] = imageToTensor(flipHorizontal(img.rgb));
        if (!img.mask.pixels.empty()) masks[k] = maskToTensor(img.mask);
      });
      const torch::Tensor latents = encode(torch::stack(images)).detach().to(torch::kCPU, torch::kFloat32);
      // Only images whose subset has flip_aug get mirrored latents (subsets may share a bucket).
      std::vector<torch::Tensor> toFlip;
      std::vector<long> flipRow(batch.size(), -1);
      for (size_t k = 0; k < batch.size(); ++k)
        if (flipped[k].defined()) {
          flipRow[k] = static_cast<long>(toFlip.size());
          toFlip.push_back(flipped[k]);
        }
      torch::Tensor flippedLatents;
      if (!toFlip.empty()) flippedLatents = encode(torch::stack(toFlip)).detach().to(torch::kCPU, torch::kFloat32);
      for (size_t k = 0; k < batch.size(); ++k) {
        const ImageEntry& e = dataset.images[batch[k]];
        CachedLatent c;
        c.latents = latents[static_cast<long>(k)].clone();
        if (flipRow[k] >= 0) c.flippedLatents = flippedLatents[flipRow[k]].clone();
        c.mask = masks[k];
        c.originalSize = {e.size.width, e.size.height};
        c.crop = cropLtrb(e.choice.bucket, c.originalSize);
        if (options.toDisk) {
          std::vector<std::pair<std::string, torch::Tensor>> tensors = {{"latents", c.latents}};
          if (c.flippedLatents.defined()) tensors.emplace_back("latents_flipped", c.flippedLatents);
          if (c.mask.defined()) tensors.emplace_back("alpha_mask", c.mask);
          io::writeSafetensors(latentCachePath(e.path, e.choice.bucket), tensors, metadata[batch[k]]);
        }
        cache.entries_[batch[k]] = std::move(c);
        ++local.encoded;
      }
    }
  }
  if (stats) *stats = local;
  return cache;
}

}  // namespace sinter::data

#pragma once
// Text-encoder outputs cached once before training, in memory or on disk beside each image
// ("<stem>_sinter_te.safetensors"), reused only when the processed caption and the encoders'
// identity match. Only possible when captions never change between steps (no shuffling,
// dropout, tag dropout, warm-up or wildcards), as in sd-scripts.
#include <torch/torch.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace sinter::data {

// Captions -> named outputs, each with the batch as its first dimension (e.g. "hidden_states"
// [B, 77, 2048] and "pooled" [B, 1280] for SDXL).
using TextEncoder = std::function<std::map<std::string, torch::Tensor>(const std::vector<std::string>& captions)>;
using TextOutputs = std::map<std::string, torch::Tensor>;

struct TextCacheOptions {
  bool toDisk = false;
  std::string encoderIdentity;
  int batchSize = 1;
};

struct TextCacheStats {
  size_t encoded = 0;
  size_t loadedFromDisk = 0;
};

std::string textCachePath(const std::string& imagePath);

class TextCache {
 public:
  // Throws DatasetError naming the subset when its captions vary per step.
  static TextCache build(const Dataset& dataset, const TextEncoder& encode, const TextCacheOptions& options,
                         TextCacheStats* stats = nullptr);
  bool has(size_t imageIndex) const { return imageIndex < entries_.size() && entries_[imageIndex].has_value(); }
  const TextOutputs& get(size_t imageIndex) const;
  // The caption the outputs were computed from.
  const std::string& caption(size_t imageIndex) const { return captions_.at(imageIndex); }

 private:
  std::vector<std::optional<TextOutputs>> entries_;
  std::vector<std::string> captions_;
};

}  // namespace sinter::data

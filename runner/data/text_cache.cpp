#include "data/text_cache.h"

#include <filesystem>

#include "data/caption.h"
#include "io/safetensors.h"

namespace sinter::data {
namespace {

std::optional<TextOutputs> loadIfValid(const std::string& path, const std::map<std::string, std::string>& expected) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  try {
    io::SafetensorsFile file(path);
    for (const auto& [k, v] : expected) {
      const auto it = file.metadata().find(k);
      if (it == file.metadata().end() || it->second != v) return std::nullopt;
    }
    TextOutputs out;
    for (const auto& key : file.keys()) out[key] = file.tensor(key).clone();
    if (out.empty()) return std::nullopt;
    return out;
  } catch (const io::SafetensorsError&) {
    return std::nullopt;
  }
}

}  // namespace

std::string textCachePath(const std::string& imagePath) {
  const std::filesystem::path p(imagePath);
  return (p.parent_path() / (p.stem().string() + "_sinter_te.safetensors")).string();
}

const TextOutputs& TextCache::get(size_t imageIndex) const {
  if (!has(imageIndex)) throw std::out_of_range("no cached text-encoder outputs for image " + std::to_string(imageIndex));
  return *entries_[imageIndex];
}

TextCache TextCache::build(const Dataset& dataset, const TextEncoder& encode, const TextCacheOptions& options,
                           TextCacheStats* stats) {
  for (const auto& d : dataset.datasets)
    for (const auto& s : d.subsets)
      if (!captionIsFixed(s.caption))
        throw DatasetError("cache_text_encoder_outputs cannot be used with shuffle_caption, caption dropout, tag "
                           "dropout, token warm-up or wildcards (" + s.imageDir + ")");
  TextCache cache;
  cache.entries_.resize(dataset.images.size());
  cache.captions_.resize(dataset.images.size());
  TextCacheStats local;
  std::vector<size_t> toEncode;
  std::vector<std::map<std::string, std::string>> metadata(dataset.images.size());
  for (size_t i = 0; i < dataset.images.size(); ++i) {
    const ImageEntry& e = dataset.images[i];
    if (e.repeats <= 0) continue;
    Rng unused(0);  // fixed captions draw nothing
    cache.captions_[i] = processCaption(e.caption, dataset.subsetOf(e).caption, {}, unused);
    metadata[i] = {{"sinter.cache", "text/1"}, {"sinter.caption", cache.captions_[i]},
                   {"sinter.encoder", options.encoderIdentity}};
    if (options.toDisk) {
      if (auto c = loadIfValid(textCachePath(e.path), metadata[i])) {
        cache.entries_[i] = std::move(c);
        ++local.loadedFromDisk;
        continue;
      }
    }
    toEncode.push_back(i);
  }
  const size_t batchSize = static_cast<size_t>(std::max(1, options.batchSize));
  for (size_t start = 0; start < toEncode.size(); start += batchSize) {
    const size_t end = std::min(toEncode.size(), start + batchSize);
    std::vector<std::string> captions;
    for (size_t k = start; k < end; ++k) captions.push_back(cache.captions_[toEncode[k]]);
    const TextOutputs outputs = encode(captions);
    for (size_t k = start; k < end; ++k) {
      const size_t i = toEncode[k];
      TextOutputs one;
      std::vector<std::pair<std::string, torch::Tensor>> tensors;
      for (const auto& [name, t] : outputs) {
        one[name] = t[static_cast<long>(k - start)].detach().to(torch::kCPU).clone();
        tensors.emplace_back(name, one[name]);
      }
      if (options.toDisk) io::writeSafetensors(textCachePath(dataset.images[i].path), tensors, metadata[i]);
      cache.entries_[i] = std::move(one);
      ++local.encoded;
    }
  }
  if (stats) *stats = local;
  return cache;
}

}  // namespace sinter::data

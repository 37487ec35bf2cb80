#include "data/validation_split.h"

#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "data/random.h"

namespace sinter::data {

namespace {
constexpr std::uint64_t kValidationStream = 0x76616c6964ULL;  // "valid": apart from the data order's streams
}  // namespace

std::size_t trainingShare(std::size_t images, double split) {
  return static_cast<std::size_t>(std::ceil(static_cast<double>(images) * (1.0 - split)));
}

void markValidationImages(Dataset& dataset, std::uint64_t fallbackSeed) {
  // Each subset's images in dataset order (its folder's sorted names).
  std::map<std::pair<int, int>, std::vector<std::size_t>> subsets;
  for (std::size_t i = 0; i < dataset.images.size(); ++i) {
    ImageEntry& e = dataset.images[i];
    e.validation = false;
    if (!e.isReg && dataset.datasetOf(e).validationSplit > 0.0) subsets[{e.datasetIndex, e.subsetIndex}].push_back(i);
  }
  for (auto& [key, indices] : subsets) {
    const DatasetSettings& settings = dataset.datasets[static_cast<std::size_t>(key.first)];
    const std::uint64_t seed = settings.validationSeed.value_or(fallbackSeed);
    Rng rng(deriveSeed(seed, kValidationStream, static_cast<std::uint64_t>(key.first), static_cast<std::uint64_t>(key.second)));
    rng.shuffle(indices);
    for (std::size_t k = trainingShare(indices.size(), settings.validationSplit); k < indices.size(); ++k)
      dataset.images[indices[k]].validation = true;
  }
}

}  // namespace sinter::data

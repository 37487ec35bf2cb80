#pragma once
// validation_split: which images of a dataset are held out for validation. As sd-scripts'
// split_train_val does per subset (DreamBoothDataset), each subset's images are shuffled with the
// validation seed and the first ceil(n * (1 - split)) train; the rest are validation images.
// Regularisation subsets are never split. The shuffle is Sinter's own generator (random.h), so the
// counts match sd-scripts' and the chosen images are fixed by the seed, not Python's.
#include <cstddef>
#include <cstdint>

#include "data/dataset.h"

namespace sinter::data {

// How many of a subset's `images` train: ceil(images * (1 - split)), sd-scripts' arithmetic.
std::size_t trainingShare(std::size_t images, double split);

// Marks Dataset::images' `validation` from the datasets' validation_split, with each dataset's
// validation_seed or else `fallbackSeed` (the run's seed). Only which images are held out depends
// on the seed, not how many, so this may run again once the run's seed is known.
void markValidationImages(Dataset& dataset, std::uint64_t fallbackSeed);

}  // namespace sinter::data

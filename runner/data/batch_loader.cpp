#include "data/batch_loader.h"

#include <cmath>

#include "data/color_augment.h"
#include "data/image_tensor.h"
#include "data/loss_mask.h"

namespace sinter::data {

BatchLoader::BatchLoader(const Dataset& dataset, const BatchPlan& plan, LoaderOptions options,
                         const LatentCache* latents, const TextCache* texts)
    : dataset_(dataset),
      plan_(plan),
      options_(options),
      latents_(latents),
      texts_(texts),
      lossMasks_(dataset.hasLossMasks()) {
  position_.seed = plan.seed();
  scheduled_ = position_;
}

BatchLoader::~BatchLoader() { drain(); }

void BatchLoader::drain() {
  for (auto& f : pending_)
    if (f.valid()) f.wait();
  pending_.clear();
}

void BatchLoader::seek(const DataOrderState& state) {
  drain();
  position_ = state;
  position_.seed = plan_.seed();
  // A position at the very end of an epoch means the next epoch's start.
  if (position_.indexInEpoch >= plan_.batchesPerEpoch()) {
    position_.epoch += position_.indexInEpoch / plan_.batchesPerEpoch();
    position_.indexInEpoch %= plan_.batchesPerEpoch();
  }
  scheduled_ = position_;
}

void BatchLoader::advance(DataOrderState& s) const {
  if (++s.indexInEpoch >= plan_.batchesPerEpoch()) {
    s.indexInEpoch = 0;
    ++s.epoch;
  }
}

Batch BatchLoader::next() {
  if (options_.workers <= 0) {
    Batch b = makeBatch(position_.epoch, position_.indexInEpoch);
    advance(position_);
    scheduled_ = position_;
    return b;
  }
  // Keep `workers` batches in flight, each built on its own thread.
  while (static_cast<int>(pending_.size()) < options_.workers) {
    const DataOrderState s = scheduled_;
    pending_.push_back(std::async(std::launch::async, [this, s] { return makeBatch(s.epoch, s.indexInEpoch); }));
    advance(scheduled_);
  }
  std::future<Batch> f = std::move(pending_.front());
  pending_.pop_front();
  advance(position_);
  return f.get();
}

Batch BatchLoader::makeBatch(long long epoch, long long indexInEpoch) const {
  const PlannedBatch planned = plan_.batchAt(epoch, indexInEpoch);
  const DatasetSettings& ds = dataset_.datasets[planned.datasetIndex];
  const long long n = static_cast<long long>(planned.imageIndices.size());
  const long long stepsPerEpoch =
      (plan_.batchesPerEpoch() + options_.gradientAccumulationSteps - 1) / options_.gradientAccumulationSteps;
  CaptionContext captionContext;
  captionContext.epoch = static_cast<int>(epoch + 1);  // sd-scripts' current_epoch is 1-based
  captionContext.step = epoch * stepsPerEpoch + indexInEpoch / options_.gradientAccumulationSteps;
  captionContext.maxTrainSteps = options_.maxTrainSteps;

  Batch b;
  b.epoch = epoch;
  b.indexInEpoch = indexInEpoch;
  b.datasetIndex = planned.datasetIndex;
  b.bucket = planned.bucket;
  b.imageIndices = planned.imageIndices;
  b.networkMultiplier = ds.networkMultiplier;
  std::vector<int64_t> originalHW, cropTL, targetHW;
  std::vector<float> weights;
  std::vector<torch::Tensor> pixels, latents, masks;
  std::map<std::string, std::vector<torch::Tensor>> texts;

  for (long long k = 0; k < n; ++k) {
    const size_t index = planned.imageIndices[static_cast<size_t>(k)];
    const ImageEntry& e = dataset_.images[index];
    const SubsetSettings& subset = dataset_.subsetOf(e);
    // One generator per sample, drawn in a fixed order: flip, crop, colour, caption.
    Rng rng(deriveSeed(plan_.seed(), static_cast<std::uint64_t>(epoch), static_cast<std::uint64_t>(indexInEpoch),
                       static_cast<std::uint64_t>(k) + 1));
    const bool flip = subset.flipAug && rng.uniform() < 0.5;
    CropLtrb crop;
    Resolution original{e.size.width, e.size.height};
    if (latents_ && latents_->has(index)) {
      const CachedLatent& c = latents_->get(index);
      latents.push_back(flip ? c.flippedLatents : c.latents);
      if (c.mask.defined()) masks.push_back(flip ? c.mask.flip({1}) : c.mask);
      crop = c.crop;
      original = c.originalSize;
    } else {
      MaskedImage img;
      try {
        img = resizeAndCrop(loadMaskedImage(e, subset), e.choice, subset.randomCrop, rng, subset.resizeFilter);
      } catch (const ImageError& err) {
        throw DatasetError(std::string("cannot load a training image: ") + err.what());
      }
      if (subset.colorAug) colorAugment(img.rgb, rng);  // before the flip, as in sd-scripts
      if (flip) img = flipHorizontal(img);
      pixels.push_back(imageToTensor(img.rgb));
      if (!img.mask.pixels.empty()) masks.push_back(maskToTensor(img.mask));
      crop = cropLtrb(e.choice.bucket, original);
    }
    // sd-scripts: where some images of a batch have masks, the others get ones.
    if (lossMasks_ && masks.size() < static_cast<size_t>(k + 1))
      masks.push_back(torch::ones({planned.bucket.height, planned.bucket.width}, torch::kFloat32));
    const Resolution target = planned.bucket;
    // Mirrored, the crop's right edge becomes its left (sd-scripts' crop_left_top for flips).
    const double cropLeft = flip ? target.width - crop.right : crop.left;
    originalHW.insert(originalHW.end(), {original.height, original.width});
    cropTL.insert(cropTL.end(), {static_cast<int64_t>(crop.top), static_cast<int64_t>(cropLeft)});
    targetHW.insert(targetHW.end(), {target.height, target.width});
    weights.push_back(e.isReg ? static_cast<float>(ds.priorLossWeight) : 1.0f);
    b.flipped.push_back(flip);

    if (texts_ && texts_->has(index)) {
      b.captions.push_back(texts_->caption(index));
      for (const auto& [name, t] : texts_->get(index)) texts[name].push_back(t);
    } else {
      b.captions.push_back(processCaption(e.caption, subset.caption, captionContext, rng));
    }
  }
  b.originalSizesHW = torch::tensor(originalHW, torch::kInt64).view({n, 2});
  b.cropTopLefts = torch::tensor(cropTL, torch::kInt64).view({n, 2});
  b.targetSizesHW = torch::tensor(targetHW, torch::kInt64).view({n, 2});
  b.lossWeights = torch::tensor(weights, torch::kFloat32);
  if (!pixels.empty() && !latents.empty())
    throw std::logic_error("a batch mixes cached latents and images: cache every image or none");
  if (!pixels.empty()) b.images = torch::stack(pixels);
  if (!latents.empty()) b.latents = torch::stack(latents);
  if (!masks.empty()) b.lossMasks = torch::stack(masks);
  for (auto& [name, list] : texts) {
    if (static_cast<long long>(list.size()) != n)
      throw std::logic_error("a batch mixes cached and uncached text-encoder outputs");
    b.textOutputs[name] = torch::stack(list);
  }
  // The captions' token ids here, in the workers, rather than on the host within the step.
  if (options_.tokenize && b.textOutputs.empty()) b.tokenIds = options_.tokenize(b.captions);
  return b;
}

}  // namespace sinter::data

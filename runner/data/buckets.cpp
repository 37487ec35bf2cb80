#include "data/buckets.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace sinter::data {

std::string toString(const Resolution& r) { return std::to_string(r.width) + "x" + std::to_string(r.height); }

Resolution parseResolution(const std::string& text) {
  auto parseSide = [&](const std::string& s) {
    size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    while (used < s.size() && s[used] == ' ') ++used;
    if (used == 0 || used != s.size() || v <= 0)
      throw std::invalid_argument("resolution must be \"SIZE\" or \"WIDTH,HEIGHT\" with positive integers, got \"" +
                                  text + "\"");
    return v;
  };
  const auto comma = text.find(',');
  if (comma == std::string::npos) {
    const int s = parseSide(text);
    return {s, s};
  }
  if (text.find(',', comma + 1) != std::string::npos)
    throw std::invalid_argument("resolution must be \"SIZE\" or \"WIDTH,HEIGHT\", got \"" + text + "\"");
  return {parseSide(text.substr(0, comma)), parseSide(text.substr(comma + 1))};
}

std::vector<Resolution> makeBucketResolutions(Resolution maxReso, int minSize, int maxSize, int divisible) {
  const long long maxArea = static_cast<long long>(maxReso.width) * maxReso.height;
  std::set<Resolution> resos;
  const int square = static_cast<int>(std::floor(std::sqrt(static_cast<double>(maxArea)) / divisible)) * divisible;
  resos.insert({square, square});
  for (int width = minSize; width <= maxSize; width += divisible) {
    const int height = std::min<long long>(maxSize, (maxArea / width) / divisible * divisible);
    if (height >= minSize) {
      resos.insert({width, height});
      resos.insert({height, width});
    }
  }
  return {resos.begin(), resos.end()};
}

BucketSelector::BucketSelector(const BucketSettings& in) : settings_(in) {
  BucketSettings& s = settings_;
  if (s.resolution.width <= 0 || s.resolution.height <= 0)
    throw std::invalid_argument("resolution must be positive, got " + toString(s.resolution));
  if (!s.enableBucket) {
    // One fixed bucket; images are resized to cover it and cropped.
    predefined_ = {s.resolution};
    return;
  }
  if (s.bucketResoSteps <= 0)
    throw std::invalid_argument("bucket_reso_steps must be positive, got " + std::to_string(s.bucketResoSteps));
  if (s.minBucketReso % s.bucketResoSteps != 0) {
    const int adjusted = s.minBucketReso - s.minBucketReso % s.bucketResoSteps;
    warnings_.push_back("min_bucket_reso adjusted to a multiple of bucket_reso_steps: " +
                        std::to_string(s.minBucketReso) + " -> " + std::to_string(adjusted));
    s.minBucketReso = adjusted;
  }
  if (s.maxBucketReso % s.bucketResoSteps != 0) {
    const int adjusted = s.maxBucketReso + s.bucketResoSteps - s.maxBucketReso % s.bucketResoSteps;
    warnings_.push_back("max_bucket_reso adjusted to a multiple of bucket_reso_steps: " +
                        std::to_string(s.maxBucketReso) + " -> " + std::to_string(adjusted));
    s.maxBucketReso = adjusted;
  }
  const int shortSide = std::min(s.resolution.width, s.resolution.height);
  const int longSide = std::max(s.resolution.width, s.resolution.height);
  if (shortSide < s.minBucketReso)
    throw std::invalid_argument("min_bucket_reso (" + std::to_string(s.minBucketReso) +
                                ") must not exceed the resolution's shorter side (" + std::to_string(shortSide) + ")");
  if (longSide > s.maxBucketReso)
    throw std::invalid_argument("max_bucket_reso (" + std::to_string(s.maxBucketReso) +
                                ") must not be below the resolution's longer side (" + std::to_string(longSide) + ")");
  if (s.bucketNoUpscale) {
    warnings_.push_back("min_bucket_reso and max_bucket_reso are ignored with bucket_no_upscale: each image's "
                        "bucket follows its own size");
  } else {
    predefined_ = makeBucketResolutions(s.resolution, s.minBucketReso, s.maxBucketReso, s.bucketResoSteps);
  }
}

int BucketSelector::roundToSteps(double x) const {
  const int v = static_cast<int>(x + 0.5);
  return v - v % settings_.bucketResoSteps;
}

BucketChoice BucketSelector::select(int imageWidth, int imageHeight) const {
  if (imageWidth <= 0 || imageHeight <= 0) throw std::invalid_argument("image size must be positive");
  const double aspect = static_cast<double>(imageWidth) / imageHeight;
  BucketChoice c;
  if (!settings_.bucketNoUpscale || !settings_.enableBucket) {
    // Scale up or down to the predefined bucket with the closest aspect ratio (an exact size
    // match wins); the first of equally close buckets, in sorted order, as numpy's argmin.
    const Resolution own{imageWidth, imageHeight};
    if (std::find(predefined_.begin(), predefined_.end(), own) != predefined_.end()) {
      c.bucket = own;
    } else {
      double best = 0;
      for (size_t i = 0; i < predefined_.size(); ++i) {
        const double err = std::abs(static_cast<double>(predefined_[i].width) / predefined_[i].height - aspect);
        if (i == 0 || err < best) {
          best = err;
          c.bucket = predefined_[i];
        }
      }
    }
    const double bucketAspect = static_cast<double>(c.bucket.width) / c.bucket.height;
    const double scale = aspect > bucketAspect ? static_cast<double>(c.bucket.height) / imageHeight
                                               : static_cast<double>(c.bucket.width) / imageWidth;
    c.resized = {static_cast<int>(imageWidth * scale + 0.5), static_cast<int>(imageHeight * scale + 0.5)};
  } else {
    // Only shrink: images larger than the resolution's area are scaled down keeping their
    // aspect ratio, rounding whichever side keeps the ratio closer; the bucket is the largest
    // multiple of the steps inside the (resized) image.
    const double maxArea = static_cast<double>(settings_.resolution.width) * settings_.resolution.height;
    if (static_cast<double>(imageWidth) * imageHeight > maxArea) {
      const double resizedWidth = std::sqrt(maxArea * aspect);
      const double resizedHeight = maxArea / resizedWidth;
      const int bWidthRounded = roundToSteps(resizedWidth);
      const int bHeightInWr = roundToSteps(bWidthRounded / aspect);
      const int bHeightRounded = roundToSteps(resizedHeight);
      const int bWidthInHr = roundToSteps(bHeightRounded * aspect);
      const double arWidthRounded = bHeightInWr > 0 ? static_cast<double>(bWidthRounded) / bHeightInWr : INFINITY;
      const double arHeightRounded = bHeightRounded > 0 ? static_cast<double>(bWidthInHr) / bHeightRounded : INFINITY;
      if (std::abs(arWidthRounded - aspect) < std::abs(arHeightRounded - aspect))
        c.resized = {bWidthRounded, static_cast<int>(bWidthRounded / aspect + 0.5)};
      else
        c.resized = {static_cast<int>(bHeightRounded * aspect + 0.5), bHeightRounded};
    } else {
      c.resized = {imageWidth, imageHeight};
    }
    const int steps = settings_.bucketResoSteps;
    c.bucket = {c.resized.width - c.resized.width % steps, c.resized.height - c.resized.height % steps};
  }
  c.arError = c.bucket.height > 0 ? static_cast<double>(c.bucket.width) / c.bucket.height - aspect : INFINITY;
  return c;
}

CropLtrb cropLtrb(Resolution bucket, Resolution imageSize) {
  const double bucketAspect = static_cast<double>(bucket.width) / bucket.height;
  const double imageAspect = static_cast<double>(imageSize.width) / imageSize.height;
  double resizedWidth, resizedHeight;
  if (bucketAspect > imageAspect) {
    resizedWidth = bucket.height * imageAspect;
    resizedHeight = bucket.height;
  } else {
    resizedWidth = bucket.width;
    resizedHeight = bucket.width / imageAspect;
  }
  CropLtrb c;
  c.left = std::floor((bucket.width - resizedWidth) / 2);  // Python's float // 2
  c.top = std::floor((bucket.height - resizedHeight) / 2);
  c.right = c.left + resizedWidth;
  c.bottom = c.top + resizedHeight;
  return c;
}

CropOrigin cropOrigin(const BucketChoice& choice, bool randomCrop, Rng& rng) {
  if (choice.resized.width < choice.bucket.width || choice.resized.height < choice.bucket.height)
    throw std::logic_error("resizeAndCrop: resized image " + toString(choice.resized) + " does not cover bucket " +
                           toString(choice.bucket));
  CropOrigin o;
  if (const int trim = choice.resized.width - choice.bucket.width; trim > 0)
    o.left = randomCrop ? static_cast<int>(rng.uniformInt(0, trim)) : trim / 2;
  if (const int trim = choice.resized.height - choice.bucket.height; trim > 0)
    o.top = randomCrop ? static_cast<int>(rng.uniformInt(0, trim)) : trim / 2;
  return o;
}

namespace {

template <typename Image>
Image resizeAndCropAt(const Image& image, const BucketChoice& choice, CropOrigin o, ResizeFilter filter) {
  Image resized = (image.width == choice.resized.width && image.height == choice.resized.height)
                      ? image
                      : resizeImage(image, choice.resized.width, choice.resized.height, filter);
  if (o.left == 0 && o.top == 0 && resized.width == choice.bucket.width && resized.height == choice.bucket.height)
    return resized;
  return cropImage(resized, o.left, o.top, choice.bucket.width, choice.bucket.height);
}

}  // namespace

RgbImage resizeAndCrop(const RgbImage& image, const BucketChoice& choice, CropOrigin origin, ResizeFilter filter) {
  return resizeAndCropAt(image, choice, origin, filter);
}

GrayImage resizeAndCrop(const GrayImage& plane, const BucketChoice& choice, CropOrigin origin, ResizeFilter filter) {
  return resizeAndCropAt(plane, choice, origin, filter);
}

RgbImage resizeAndCrop(const RgbImage& image, const BucketChoice& choice, bool randomCrop, Rng& rng,
                       ResizeFilter filter) {
  return resizeAndCrop(image, choice, cropOrigin(choice, randomCrop, rng), filter);
}

}  // namespace sinter::data

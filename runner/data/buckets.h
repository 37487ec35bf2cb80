#pragma once
// Aspect-ratio buckets exactly as sd-scripts makes them (library/model_util.py
// make_bucket_resolutions, library/train_util.py BucketManager and trim_and_resize_if_required).
#include <string>
#include <vector>

#include "data/image_decode.h"
#include "data/image_transform.h"
#include "data/random.h"

namespace sinter::data {

struct Resolution {
  int width = 0;
  int height = 0;
  bool operator==(const Resolution& o) const { return width == o.width && height == o.height; }
  bool operator!=(const Resolution& o) const { return !(*this == o); }
  bool operator<(const Resolution& o) const { return width != o.width ? width < o.width : height < o.height; }
};
std::string toString(const Resolution& r);  // "1024x768"

// "1024" or "1024,768" (sd-scripts' --resolution). Throws std::invalid_argument.
Resolution parseResolution(const std::string& text);

// Every (w, h) with w, h multiples of `divisible` in [minSize, maxSize] whose area stays within
// maxReso's area, plus the square bucket; sorted by width then height.
std::vector<Resolution> makeBucketResolutions(Resolution maxReso, int minSize, int maxSize, int divisible);

struct BucketSettings {
  Resolution resolution{1024, 1024};
  bool enableBucket = false;
  int minBucketReso = 256;
  int maxBucketReso = 1024;
  int bucketResoSteps = 64;
  bool bucketNoUpscale = false;
};

struct BucketChoice {
  Resolution bucket;   // the training size
  Resolution resized;  // the image is resized to this (covering the bucket), then cropped
  double arError = 0;  // bucket aspect ratio minus image aspect ratio
};

// Chooses each image's bucket. Construction checks and adjusts the settings as sd-scripts does
// (min/max_bucket_reso rounded to bucket_reso_steps, with a warning each), throwing
// std::invalid_argument when resolution lies outside [min_bucket_reso, max_bucket_reso].
class BucketSelector {
 public:
  explicit BucketSelector(const BucketSettings& settings);
  BucketChoice select(int imageWidth, int imageHeight) const;
  const BucketSettings& settings() const { return settings_; }  // after adjustment
  // The predefined buckets (empty with bucket_no_upscale, whose buckets follow each image).
  const std::vector<Resolution>& predefined() const { return predefined_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  int roundToSteps(double x) const;
  BucketSettings settings_;
  std::vector<Resolution> predefined_;
  std::vector<std::string> warnings_;
};

// SDXL's crop conditioning, computed as sd-scripts' get_crop_ltrb does (Stability AI's
// preprocessing: the image fitted inside the bucket, centred), whatever crop was really taken.
struct CropLtrb {
  double left = 0, top = 0, right = 0, bottom = 0;
};
CropLtrb cropLtrb(Resolution bucket, Resolution imageSize);

// Resizes `image` to choice.resized and crops it to choice.bucket: centred, or at a random
// offset drawn from `rng` when randomCrop (sd-scripts' trim_and_resize_if_required).
RgbImage resizeAndCrop(const RgbImage& image, const BucketChoice& choice, bool randomCrop, Rng& rng,
                       ResizeFilter filter = ResizeFilter::Default);

// The same in two halves, so that a loss mask gets the very crop of its image: where the crop
// starts in the resized image (drawn from `rng` when randomCrop, width first), and the resize and
// crop at that origin.
struct CropOrigin {
  int left = 0;
  int top = 0;
};
CropOrigin cropOrigin(const BucketChoice& choice, bool randomCrop, Rng& rng);
RgbImage resizeAndCrop(const RgbImage& image, const BucketChoice& choice, CropOrigin origin, ResizeFilter filter);
GrayImage resizeAndCrop(const GrayImage& plane, const BucketChoice& choice, CropOrigin origin, ResizeFilter filter);

}  // namespace sinter::data

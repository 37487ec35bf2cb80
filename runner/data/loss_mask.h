#pragma once
// Loss masks as sd-scripts makes them (library/train_util.py, custom_train_functions.py's
// apply_masked_loss): per pixel in [0, 1], from the image's alpha channel (alpha_mask; an image
// without alpha is opaque, all ones) or from the red channel of the conditioning image of the same
// name (conditioning_data_dir with masked_loss). A mask is resized, cropped and mirrored with its
// image, so it stays on the pixels it was drawn for.
#include <map>
#include <string>
#include <vector>

#include "data/buckets.h"
#include "data/dataset.h"
#include "data/image_decode.h"

namespace sinter::data {

enum class MaskSource { None, Alpha, ConditioningImage };
// A conditioning_data_dir comes first (sd-scripts' ControlNet-style subsets have no alpha_mask).
MaskSource maskSourceOf(const SubsetSettings& subset);

// A training image and its loss mask; the mask is empty (0 x 0) when the subset has none.
struct MaskedImage {
  RgbImage rgb;
  GrayImage mask;
};

// Decodes `e` and its mask. Throws ImageError naming the file (the image or the mask image), and
// for a mask image of another size than the image.
MaskedImage loadMaskedImage(const ImageEntry& e, const SubsetSettings& subset);
// Both resized to choice.resized and cropped to choice.bucket at the same origin.
MaskedImage resizeAndCrop(const MaskedImage& image, const BucketChoice& choice, bool randomCrop, Rng& rng,
                          ResizeFilter filter);
MaskedImage flipHorizontal(const MaskedImage& image);

// A conditioning_data_dir's images by file name without extension (sd-scripts pairs them with
// the training images so, through glob_images), each list sorted. Throws DatasetError for a
// folder that is missing or cannot be read.
std::map<std::string, std::vector<std::string>> imagesByStem(const std::string& dir);

}  // namespace sinter::data

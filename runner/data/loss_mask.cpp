#include "data/loss_mask.h"

#include <algorithm>
#include <filesystem>

namespace sinter::data {
namespace fs = std::filesystem;

MaskSource maskSourceOf(const SubsetSettings& subset) {
  if (!subset.conditioningDataDir.empty()) return MaskSource::ConditioningImage;
  return subset.alphaMask ? MaskSource::Alpha : MaskSource::None;
}

MaskedImage loadMaskedImage(const ImageEntry& e, const SubsetSettings& subset) {
  switch (maskSourceOf(subset)) {
    case MaskSource::None: return {loadImageFile(e.path), {}};
    case MaskSource::Alpha: {
      RgbaImage rgba = loadImageFileWithAlpha(e.path);
      return {std::move(rgba.rgb), std::move(rgba.alpha)};
    }
    case MaskSource::ConditioningImage: {
      if (e.maskPath.empty()) throw ImageError(e.path, "no mask image in " + subset.conditioningDataDir);
      MaskedImage out{loadImageFile(e.path), {}};
      const RgbImage cond = loadImageFile(e.maskPath);
      if (cond.width != out.rgb.width || cond.height != out.rgb.height)
        throw ImageError(e.maskPath, "mask image is " + toString({cond.width, cond.height}) + " but its image " + e.path +
                                         " is " + toString({out.rgb.width, out.rgb.height}));
      // sd-scripts reads the conditioning image's R channel: (R / 127.5 - 1) / 2 + 0.5 = R / 255.
      out.mask = GrayImage(cond.width, cond.height);
      for (size_t i = 0; i < out.mask.pixels.size(); ++i) out.mask.pixels[i] = cond.pixels[i * 3];
      return out;
    }
  }
  return {};
}

MaskedImage resizeAndCrop(const MaskedImage& image, const BucketChoice& choice, bool randomCrop, Rng& rng,
                          ResizeFilter filter) {
  const CropOrigin origin = cropOrigin(choice, randomCrop, rng);
  MaskedImage out;
  out.rgb = resizeAndCrop(image.rgb, choice, origin, filter);
  if (!image.mask.pixels.empty()) out.mask = resizeAndCrop(image.mask, choice, origin, filter);
  return out;
}

MaskedImage flipHorizontal(const MaskedImage& image) {
  MaskedImage out;
  out.rgb = flipHorizontal(image.rgb);
  if (!image.mask.pixels.empty()) out.mask = flipHorizontal(image.mask);
  return out;
}

std::map<std::string, std::vector<std::string>> imagesByStem(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw DatasetError("conditioning_data_dir is not a folder: " + dir);
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && hasImageExtension(entry.path().filename().string()))
      out[entry.path().stem().string()].push_back(entry.path().string());
  if (ec) throw DatasetError("cannot list conditioning_data_dir " + dir + ": " + ec.message());
  for (auto& [stem, paths] : out) std::sort(paths.begin(), paths.end());
  return out;
}

}  // namespace sinter::data

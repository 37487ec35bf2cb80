#include "data/dataset.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "data/caption_file.h"
#include "data/loss_mask.h"
#include "data/metadata_file.h"
#include "data/parallel_for.h"
#include "data/validation_split.h"

namespace sinter::data {

DiscoveryOptions DiscoveryOptions::fromConfig(const Config& config) {
  DiscoveryOptions o;
  o.workers = std::max(1, static_cast<int>(config.getInt("max_data_loader_n_workers")));
  if (!isUnset(config.get("seed"))) o.validationSeed = static_cast<std::uint64_t>(config.getInt("seed"));
  return o;
}
namespace fs = std::filesystem;

namespace {

std::string located(const SubsetSettings& s) {
  return s.where.file.empty() ? std::string() : " (" + s.where.file + ":" + std::to_string(s.where.line) + ")";
}

// Why an entry named as an image is no image file: "" when it is a regular file (or a link to one).
std::string whyNotAnImageFile(const fs::directory_entry& entry) {
  std::error_code ec;
  if (entry.is_regular_file(ec)) return "";
  if (entry.is_symlink(ec) && !fs::exists(entry.path(), ec))
    return "a symbolic link to '" + fs::read_symlink(entry.path(), ec).string() + "', which does not exist";
  if (entry.is_directory(ec)) return "a folder, not an image file";
  return "not a regular file";
}

// The subset's image files in name order; entries named as images that are not image files
// (folders, dangling links, devices) go to `skipped` with the reason.
std::vector<std::string> listImages(const SubsetSettings& s, std::vector<SkippedImage>& skipped) {
  std::error_code ec;
  if (!fs::exists(s.imageDir, ec)) throw DatasetError("image folder does not exist: " + s.imageDir + located(s));
  if (!fs::is_directory(s.imageDir, ec)) throw DatasetError("image_dir is not a folder: " + s.imageDir + located(s));
  std::vector<std::string> paths;
  std::vector<SkippedImage> notFiles;
  for (const auto& entry : fs::directory_iterator(s.imageDir, ec)) {
    if (!hasImageExtension(entry.path().filename().string())) continue;
    if (const std::string why = whyNotAnImageFile(entry); !why.empty()) notFiles.push_back({entry.path().string(), why});
    else paths.push_back(entry.path().string());
  }
  if (ec) throw DatasetError("cannot list image folder " + s.imageDir + ": " + ec.message());
  std::sort(paths.begin(), paths.end());
  std::sort(notFiles.begin(), notFiles.end(), [](const SkippedImage& a, const SkippedImage& b) { return a.path < b.path; });
  skipped.insert(skipped.end(), notFiles.begin(), notFiles.end());
  return paths;
}

// sd-scripts gives reg images extra repeats, round-robin, until they match the train images
// (with repeats); with more reg images than that, the later ones are not used at all.
void balanceRegImages(std::vector<ImageEntry>& images, const std::vector<size_t>& regIndices, long long numTrain) {
  if (regIndices.empty()) return;
  std::vector<int> original;
  for (size_t i : regIndices) {
    original.push_back(images[i].repeats);
    images[i].repeats = 0;
  }
  long long n = 0;
  bool firstLoop = true;
  while (n < numTrain) {
    for (size_t k = 0; k < regIndices.size(); ++k) {
      ImageEntry& e = images[regIndices[k]];
      if (firstLoop) {
        e.repeats = original[k];
        n += original[k];
      } else {
        e.repeats += 1;
        n += 1;
      }
      if (n >= numTrain) break;
    }
    firstLoop = false;
  }
}

}  // namespace

std::string Dataset::report() const {
  std::string out;
  for (const auto& w : warnings) out += "warning: " + w + "\n";
  for (const auto& s : skipped) out += "skipped " + s.path + ": " + s.reason + "\n";
  return out;
}

bool Dataset::hasLossMasks() const {
  for (const ImageEntry& e : images)
    if (e.repeats > 0 && maskSourceOf(subsetOf(e)) != MaskSource::None) return true;
  return false;
}

Dataset buildDataset(std::vector<DatasetSettings> settings, const DiscoveryOptions& options) {
  Dataset out;
  // conditioning_data_dir: each folder listed once, and which of its images are paired (a folder
  // may serve several subsets; sd-scripts refuses images that pair with no training image).
  std::map<std::string, std::map<std::string, std::vector<std::string>>> maskFolders;
  std::set<std::string> pairedMasks;
  std::vector<std::string> refusedCaptions;  // empty, unreadable or not UTF-8: all named at once
  for (size_t di = 0; di < settings.size(); ++di) {
    DatasetSettings& ds = settings[di];
    BucketSelector selector = [&] {
      try {
        return BucketSelector(ds.buckets);
      } catch (const std::invalid_argument& e) {
        throw DatasetError(std::string("dataset ") + std::to_string(di + 1) + ": " + e.what());
      }
    }();
    ds.buckets = selector.settings();
    for (const auto& w : selector.warnings()) out.warnings.push_back(w);

    long long numTrain = 0, numReg = 0;
    std::vector<size_t> regIndices;
    std::set<std::pair<std::string, bool>> seenDirs;
    for (size_t si = 0; si < ds.subsets.size(); ++si) {
      const SubsetSettings& subset = ds.subsets[si];
      if (subset.numRepeats < 1) {
        out.warnings.push_back("ignoring " + subset.imageDir + ": num_repeats is less than 1");
        continue;
      }
      // A fine-tuning subset is its metadata file (image_dir only resolves its keys).
      const bool fineTuning = !subset.metadataFile.empty();
      const std::string source = fineTuning ? subset.metadataFile : subset.imageDir;
      if (!seenDirs.insert({fs::path(source).lexically_normal().string(), subset.isReg}).second) {
        out.warnings.push_back("ignoring duplicate subset " + source + located(subset) + ": the first one with this " +
                               (fineTuning ? "metadata_file" : "image_dir") + " is used");
        continue;
      }
      std::vector<std::string> paths;
      std::map<std::string, std::string> metadataCaptions;
      if (fineTuning) {
        for (MetadataImage& m : readMetadataFile(subset.metadataFile, subset.imageDir, subset.caption.captionSeparator)) {
          paths.push_back(m.path);
          metadataCaptions[m.path] = std::move(m.caption);
        }
      } else {
        paths = listImages(subset, out.skipped);
      }
      if (paths.empty()) {
        out.warnings.push_back(fineTuning ? "no image entries in " + subset.metadataFile + located(subset)
                                          : "no images (.png .jpg .jpeg .webp .bmp) in " + subset.imageDir + located(subset));
        continue;
      }
      // Sizes from the headers (or full decodes), in parallel; failures are kept by index.
      std::vector<ImageSize> sizes(paths.size());
      std::vector<std::string> errors(paths.size());
      parallelFor(paths.size(), options.workers, [&](size_t i) {
        try {
          if (options.verifyPixels) {
            const RgbImage img = loadImageFile(paths[i]);
            sizes[i] = {img.width, img.height};
          } else {
            sizes[i] = readImageSize(paths[i]);
          }
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      });
      const std::map<std::string, std::vector<std::string>>* masks = nullptr;
      if (!subset.conditioningDataDir.empty()) {
        auto it = maskFolders.find(subset.conditioningDataDir);
        if (it == maskFolders.end())
          it = maskFolders.emplace(subset.conditioningDataDir, imagesByStem(subset.conditioningDataDir)).first;
        masks = &it->second;
      }
      std::vector<std::string> missingMasks;
      size_t missingCaptions = 0;
      const std::string standIn = subset.classTokens && !subset.classTokens->empty()
                                      ? "using the class tokens \"" + *subset.classTokens + "\""
                                      : std::string("using an empty caption");
      const size_t subsetStart = out.images.size();
      for (size_t i = 0; i < paths.size(); ++i) {
        if (!errors[i].empty()) {
          // ImageError's message starts with the path; keep only the reason.
          std::string reason = errors[i];
          if (reason.rfind(paths[i] + ": ", 0) == 0) reason = reason.substr(paths[i].size() + 2);
          out.skipped.push_back({paths[i], reason});
          continue;
        }
        ImageEntry e;
        e.path = paths[i];
        e.datasetIndex = static_cast<int>(di);
        e.subsetIndex = static_cast<int>(si);
        e.isReg = subset.isReg;
        e.repeats = subset.numRepeats;
        e.size = sizes[i];
        e.choice = selector.select(e.size.width, e.size.height);
        if (e.choice.bucket.width <= 0 || e.choice.bucket.height <= 0) {
          out.skipped.push_back({e.path,
                                 "too small: " + toString({e.size.width, e.size.height}) + " has a side below bucket_reso_steps (" +
                                     std::to_string(ds.buckets.bucketResoSteps) + ") and bucket_no_upscale does not enlarge images",
                                 true});
          continue;
        }
        if (ds.buckets.enableBucket && ds.buckets.bucketNoUpscale &&
            std::min(e.choice.bucket.width, e.choice.bucket.height) < ds.buckets.minBucketReso)
          out.warnings.push_back(e.path + " (" + toString({e.size.width, e.size.height}) + ") gets bucket " +
                                 toString(e.choice.bucket) + ", below min_bucket_reso " +
                                 std::to_string(ds.buckets.minBucketReso));
        if (masks) {
          const auto found = masks->find(fs::path(e.path).stem().string());
          if (found == masks->end()) {
            missingMasks.push_back(e.path);
            continue;
          }
          e.maskPath = found->second.front();
          pairedMasks.insert(found->second.begin(), found->second.end());  // sd-scripts pairs by name
          ImageSize maskSize;
          try {
            maskSize = readImageSize(e.maskPath);
          } catch (const ImageError& err) {
            throw DatasetError(std::string("cannot read a mask image: ") + err.what());
          }
          if (maskSize.width != e.size.width || maskSize.height != e.size.height)
            throw DatasetError("mask image " + e.maskPath + " is " + toString({maskSize.width, maskSize.height}) +
                               " but its training image " + e.path + " is " + toString({e.size.width, e.size.height}) +
                               "; a mask must have its image's size");
        }
        CaptionLookup caption;
        if (fineTuning) {
          caption.status = CaptionLookup::Status::Found;
          caption.caption = metadataCaptions.at(e.path);
        } else {
          caption = lookUpCaption(e.path, subset.captionExtension, subset.caption.enableWildcard);
        }
        e.captionStatus = caption.status;
        e.captionFile = caption.file;
        e.captionProblem = caption.problem;
        switch (caption.status) {
          case CaptionLookup::Status::Found: e.caption = caption.caption; break;
          case CaptionLookup::Status::NoFile:
            ++missingCaptions;
            e.caption = subset.classTokens.value_or("");
            break;
          case CaptionLookup::Status::NotAFile:
            // sd-scripts passes over it as no caption file; said apart from those, naming the image.
            e.caption = subset.classTokens.value_or("");
            out.warnings.push_back(e.path + " has no caption: " + caption.problem + "; " + standIn);
            break;
          case CaptionLookup::Status::EmptyFile:
          case CaptionLookup::Status::Unreadable:
            refusedCaptions.push_back(caption.problem);
            if (!options.inspectOnly) continue;
            break;
        }
        if (subset.isReg) {
          numReg += subset.numRepeats;
          regIndices.push_back(out.images.size());
        }
        out.images.push_back(std::move(e));
      }
      if (!missingMasks.empty()) {
        std::string msg = std::to_string(missingMasks.size()) + " image(s) of " + subset.imageDir + located(subset) +
                          " have no mask image of the same name in conditioning_data_dir " + subset.conditioningDataDir + ":";
        for (const auto& p : missingMasks) msg += "\n  " + p;
        throw DatasetError(msg);
      }
      if (!subset.isReg) {
        // validation_split holds out part of the usable images (which ones: markValidationImages).
        const size_t usable = out.images.size() - subsetStart;
        const size_t training = ds.validationSplit > 0.0 ? trainingShare(usable, ds.validationSplit) : usable;
        numTrain += static_cast<long long>(training) * subset.numRepeats;
        out.numValidationImages += static_cast<long long>(usable - training) * subset.numRepeats;
      }
      if (missingCaptions > 0)
        out.warnings.push_back(std::to_string(missingCaptions) + " image(s) in " + subset.imageDir + " have no " +
                               subset.captionExtension + " caption file; " + standIn);
    }
    if (numTrain < numReg) out.warnings.push_back("some regularisation images are not used: there are more than train images");
    balanceRegImages(out.images, regIndices, numTrain);
    out.numTrainImages += numTrain;
    out.numRegImages += numReg;
  }
  for (const auto& [dir, byStem] : maskFolders) {
    std::vector<std::string> extra;
    for (const auto& [stem, paths] : byStem)
      for (const auto& p : paths)
        if (!pairedMasks.count(p)) extra.push_back(p);
    if (!extra.empty()) {
      std::string msg = "conditioning_data_dir " + dir + " has " + std::to_string(extra.size()) +
                        " image(s) that pair with no training image (by file name):";
      for (const auto& p : extra) msg += "\n  " + p;
      throw DatasetError(msg);
    }
  }
  if (!refusedCaptions.empty() && !options.inspectOnly) {
    if (refusedCaptions.size() == 1) throw DatasetError(refusedCaptions.front());
    std::string msg = std::to_string(refusedCaptions.size()) + " caption files cannot be used:";
    for (const auto& why : refusedCaptions) msg += "\n  " + why;
    throw DatasetError(msg);
  }
  out.datasets = std::move(settings);
  markValidationImages(out, options.validationSeed);
  if (out.numTrainImages == 0 && !options.inspectOnly) {
    std::string msg = "nothing to train on: no usable training images";
    if (!out.skipped.empty()) {
      msg += "; skipped:";
      for (const auto& s : out.skipped) msg += "\n  " + s.path + ": " + s.reason;
    }
    for (const auto& w : out.warnings) msg += "\n  " + w;
    throw DatasetError(msg);
  }
  return out;
}

}  // namespace sinter::data

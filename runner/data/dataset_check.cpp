#include "data/dataset_check.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "data/caption.h"
#include "data/file_content_hash.h"
#include "data/parallel_for.h"

namespace sinter::data {

namespace {

using events::DatasetFile;

// A warning names this many files of a kind; the report (and --check_dataset) has them all.
constexpr size_t kFilesNamedInWarning = 10;

std::string sizeText(int width, int height) { return toString(Resolution{width, height}); }

// ImageError's message starts with the path; the finding names the file apart from its reason.
std::string reasonOf(const std::string& message, const std::string& path) {
  return message.rfind(path + ": ", 0) == 0 ? message.substr(path.size() + 2) : message;
}

// What stands in for a missing caption, as the run takes it.
std::string standInOf(const SubsetSettings& subset) {
  return subset.classTokens && !subset.classTokens->empty() ? "the class tokens \"" + *subset.classTokens + "\" stand in"
                                                            : "it trains with an empty caption";
}

// "<what> (N): a (why), b (why), ... and K more".
std::string findingsLine(const std::string& what, const std::vector<DatasetFile>& files) {
  std::string line = what + " (" + std::to_string(files.size()) + "): ";
  for (size_t i = 0; i < files.size() && i < kFilesNamedInWarning; ++i)
    line += (i ? "; " : "") + files[i].path + " (" + files[i].reason + ")";
  if (files.size() > kFilesNamedInWarning)
    line += "; and " + std::to_string(files.size() - kFilesNamedInWarning) + " more (sinter-runner --check_dataset lists them all)";
  return line;
}

// The caption findings of one image (each image file once).
void checkCaption(const ImageEntry& e, const SubsetSettings& subset, events::DatasetCheck& report) {
  switch (e.captionStatus) {
    case CaptionLookup::Status::NoFile:
      report.missing_captions.push_back({e.path, "no " + subset.captionExtension + " caption file; " + standInOf(subset)});
      return;
    case CaptionLookup::Status::NotAFile:
      report.missing_captions.push_back({e.path, e.captionProblem + "; " + standInOf(subset)});
      return;
    case CaptionLookup::Status::EmptyFile:
      report.empty_captions.push_back({e.path, e.captionProblem + " (no lines at all: a run refuses it, as sd-scripts does)"});
      report.refusals.push_back(e.captionProblem);
      return;
    case CaptionLookup::Status::Unreadable:
      report.unreadable.push_back({e.captionFile, e.captionProblem});
      report.refusals.push_back(e.captionProblem);
      return;
    case CaptionLookup::Status::Found:
      if (!stripWhitespace(e.caption).empty()) return;
      report.empty_captions.push_back(
          {e.path, e.captionFile.empty() ? "its caption in metadata_file " + subset.metadataFile + " is empty"
                                         : "its caption file " + e.captionFile + " holds only blank lines"});
      return;
  }
}

// An image smaller than the smallest bucket (with enable_bucket: min_bucket_reso; otherwise the
// resolution) is enlarged, or with bucket_no_upscale trains at a bucket below min_bucket_reso.
std::optional<DatasetFile> smallerThanSmallestBucket(const ImageEntry& e, const BucketSettings& b) {
  const int w = e.size.width, h = e.size.height;
  std::string limit;
  if (b.enableBucket && (w < b.minBucketReso || h < b.minBucketReso))
    limit = "the smallest bucket side, min_bucket_reso " + std::to_string(b.minBucketReso);
  else if (!b.enableBucket && (w < b.resolution.width || h < b.resolution.height))
    limit = "the resolution " + toString(b.resolution);
  if (limit.empty()) return std::nullopt;
  const std::string what = sizeText(w, h) + " is smaller than " + limit;
  if (b.enableBucket && b.bucketNoUpscale) return DatasetFile{e.path, what + ": it trains at bucket " + toString(e.choice.bucket) + ", not enlarged"};
  return DatasetFile{e.path, what + ": it is enlarged to " + toString(e.choice.resized) + " for bucket " + toString(e.choice.bucket)};
}

// Decodes each file (when asked) and hashes those that could have a twin: with the pixels read,
// every file (its bytes are in memory); otherwise only files whose size another file shares.
void checkContents(const std::vector<std::string>& paths, const DatasetCheckOptions& options, DatasetCheckResult& result) {
  std::vector<std::optional<std::uint64_t>> sizes(paths.size());
  std::vector<std::optional<std::uint64_t>> hashes(paths.size());
  std::vector<std::string> unreadable(paths.size()), undecodable(paths.size());
  if (options.decodePixels) {
    parallelFor(paths.size(), options.workers, [&](size_t i) {
      std::string bytes;
      try {
        bytes = readImageBytes(paths[i]);
      } catch (const ImageError& e) {
        unreadable[i] = reasonOf(e.what(), paths[i]);
        return;
      }
      sizes[i] = bytes.size();
      if (options.compareContents) hashes[i] = contentHashOf(bytes);
      try {
        decodeImage(bytes, paths[i]);
      } catch (const ImageError& e) {
        undecodable[i] = reasonOf(e.what(), paths[i]);
      }
    });
  } else if (options.compareContents) {
    std::map<std::uint64_t, int> filesOfSize;
    for (size_t i = 0; i < paths.size(); ++i) {
      std::error_code ec;
      const std::uintmax_t size = std::filesystem::file_size(paths[i], ec);
      if (ec) continue;  // it was read moments ago; a file that went away is the run's to report
      sizes[i] = size;
      ++filesOfSize[size];
    }
    parallelFor(paths.size(), options.workers, [&](size_t i) {
      if (!sizes[i] || filesOfSize.at(*sizes[i]) < 2) return;
      try {
        hashes[i] = contentHashOfFile(paths[i]);
      } catch (const std::exception& e) {
        unreadable[i] = reasonOf(e.what(), paths[i]);
      }
    });
  }
  events::DatasetCheck& report = result.report;
  std::vector<DatasetFile> newlyUnreadable;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!unreadable[i].empty()) newlyUnreadable.push_back({paths[i], unreadable[i]});
    if (!undecodable[i].empty())
      newlyUnreadable.push_back({paths[i], "its header reads but its pixels do not decode (" + undecodable[i] + "): a run stops when it loads it"});
  }
  if (!newlyUnreadable.empty()) result.warnings.push_back(findingsLine("image files that cannot be read", newlyUnreadable));
  report.unreadable.insert(report.unreadable.end(), newlyUnreadable.begin(), newlyUnreadable.end());

  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::string>> byContent;
  for (size_t i = 0; i < paths.size(); ++i)
    if (sizes[i] && hashes[i]) {
      byContent[{*sizes[i], *hashes[i]}].push_back(paths[i]);
      ++result.filesHashed;
    }
  for (auto& [content, group] : byContent) {
    if (group.size() < 2) continue;
    std::sort(group.begin(), group.end());
    report.duplicates.push_back(group);
  }
  std::sort(report.duplicates.begin(), report.duplicates.end());
  if (report.duplicates.empty()) return;
  std::string line = "image files with the same content (" + std::to_string(report.duplicates.size()) +
                     " group(s); each copy trains as an image of its own): ";
  for (size_t g = 0; g < report.duplicates.size() && g < kFilesNamedInWarning; ++g) {
    line += g ? "; " : "";
    for (size_t k = 0; k < report.duplicates[g].size(); ++k) line += (k ? " = " : "") + report.duplicates[g][k];
  }
  if (report.duplicates.size() > kFilesNamedInWarning)
    line += "; and " + std::to_string(report.duplicates.size() - kFilesNamedInWarning) + " more group(s)";
  result.warnings.push_back(line);
}

// The images each bucket gets, each once and with its repeats; validation images and regularisation
// images that balancing left out train in no bucket.
std::vector<events::DatasetBucket> bucketHistogram(const Dataset& d) {
  std::map<Resolution, events::DatasetBucket> buckets;
  for (const ImageEntry& e : d.images) {
    if (e.validation || e.repeats <= 0) continue;
    events::DatasetBucket& b = buckets[e.choice.bucket];
    b.width = e.choice.bucket.width;
    b.height = e.choice.bucket.height;
    b.images += 1;
    b.with_repeats += e.repeats;
  }
  std::vector<events::DatasetBucket> out;
  for (const auto& [reso, bucket] : buckets) out.push_back(bucket);
  return out;
}

// Every subset, in the order of the settings, with what the run draws from it.
std::vector<events::DatasetFolder> folderRepeats(const Dataset& d) {
  std::vector<events::DatasetFolder> out;
  std::map<std::pair<int, int>, size_t> index;
  for (size_t di = 0; di < d.datasets.size(); ++di)
    for (size_t si = 0; si < d.datasets[di].subsets.size(); ++si) {
      const SubsetSettings& s = d.datasets[di].subsets[si];
      events::DatasetFolder f;
      f.path = s.metadataFile.empty() ? s.imageDir : s.metadataFile;
      f.repeats = s.numRepeats;
      f.regularization = s.isReg;
      index[{static_cast<int>(di), static_cast<int>(si)}] = out.size();
      out.push_back(f);
    }
  for (const ImageEntry& e : d.images) {
    events::DatasetFolder& f = out[index.at({e.datasetIndex, e.subsetIndex})];
    f.images += 1;
    if (e.validation) f.validation += 1;
    else f.with_repeats += e.repeats;
  }
  return out;
}

}  // namespace

DatasetCheckResult checkDataset(const Dataset& d, const std::vector<std::string>& readingWarnings, const DatasetCheckOptions& options) {
  DatasetCheckResult result;
  events::DatasetCheck& report = result.report;
  report.images = static_cast<long long>(d.images.size());
  report.contents_compared = options.compareContents;
  report.pixels_decoded = options.decodePixels;
  report.warnings = readingWarnings;

  // Files the reading left out: already named in its warnings.
  for (const SkippedImage& s : d.skipped) (s.tooSmall ? report.too_small : report.unreadable).push_back({s.path, s.reason + "; not used"});

  // One image file may be in two subsets (a folder as training and as regularisation images).
  std::vector<std::string> paths;
  std::set<std::string> seen;
  std::vector<DatasetFile> emptyCaptions, unreadableCaptions, small;
  for (const ImageEntry& e : d.images) {
    if (!seen.insert(e.path).second) continue;
    paths.push_back(e.path);
    const size_t emptyBefore = report.empty_captions.size(), unreadableBefore = report.unreadable.size();
    checkCaption(e, d.subsetOf(e), report);
    emptyCaptions.insert(emptyCaptions.end(), report.empty_captions.begin() + emptyBefore, report.empty_captions.end());
    unreadableCaptions.insert(unreadableCaptions.end(), report.unreadable.begin() + unreadableBefore, report.unreadable.end());
    const BucketSettings& buckets = d.datasetOf(e).buckets;
    if (const std::optional<DatasetFile> finding = smallerThanSmallestBucket(e, buckets)) {
      report.too_small.push_back(*finding);
      // bucket_no_upscale's small buckets are in the reading's warnings already.
      if (!(buckets.enableBucket && buckets.bucketNoUpscale)) small.push_back(*finding);
    }
  }
  // Images without a caption file are in the reading's warnings (a count per folder, and each whose
  // caption path is a folder).
  if (!emptyCaptions.empty()) result.warnings.push_back(findingsLine("images with an empty caption", emptyCaptions));
  if (!unreadableCaptions.empty()) result.warnings.push_back(findingsLine("caption files that cannot be read", unreadableCaptions));
  if (!small.empty()) result.warnings.push_back(findingsLine("images smaller than the smallest bucket", small));

  if (options.compareContents || options.decodePixels) checkContents(paths, options, result);
  report.buckets = bucketHistogram(d);
  report.folders = folderRepeats(d);
  if (d.numTrainImages == 0) report.refusals.push_back("nothing to train on: no usable training images");
  return result;
}

}  // namespace sinter::data

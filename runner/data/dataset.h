#pragma once
// The images a run trains on: each subset's folder listed, captions read, sizes read from the
// headers, buckets chosen, and regularisation images balanced to the training images as
// sd-scripts' DreamBoothDataset does. Unreadable images are listed and skipped. With
// validation_split, part of each subset is held out for validation (validation_split.h). What is
// wrong with the images in use (duplicates, small images, ...) is dataset_check.h's to say.
#include <cstdint>
#include <string>
#include <vector>

#include "data/buckets.h"
#include "data/caption_file.h"
#include "data/dataset_settings.h"
#include "data/image_decode.h"

namespace sinter::data {

struct ImageEntry {
  std::string path;
  std::string caption;  // as read (caption file or class tokens), before per-step processing
  int datasetIndex = 0;
  int subsetIndex = 0;  // into DatasetSettings::subsets
  bool isReg = false;
  int repeats = 1;      // after regularisation balancing; 0: not used (more reg images than needed)
  bool validation = false;  // held out by validation_split: never trained on (validation_split.h)
  ImageSize size;       // as displayed (EXIF orientation applied)
  BucketChoice choice;
  std::string maskPath;  // the subset's conditioning_data_dir image of the same name, if it has one
  // What looking for its caption file found (caption_file.h; Found for a metadata_file's caption,
  // whose captionFile is ""), and why it gave no caption. EmptyFile and Unreadable only where
  // DiscoveryOptions::inspectOnly keeps such images: a run refuses them.
  CaptionLookup::Status captionStatus = CaptionLookup::Status::Found;
  std::string captionFile;
  std::string captionProblem;
};

struct SkippedImage {
  std::string path;
  std::string reason;
  bool tooSmall = false;  // it reads, but fits no bucket; the others could not be read as images
};

struct DiscoveryOptions {
  // Decode every image fully while listing (catches corrupt pixel data, not just bad headers).
  bool verifyPixels = false;
  // Which images validation_split holds out, where a dataset sets no validation_seed (the run's seed).
  std::uint64_t validationSeed = 0;
  int workers = 1;  // threads for reading sizes / verifying
  // For the dataset check (dataset_check.h): caption files a run refuses (empty, unreadable) are
  // kept on their images instead of thrown, and a dataset with nothing to train on is returned.
  bool inspectOnly = false;

  // As a run reads its dataset: max_data_loader_n_workers threads (at least one), and the run's seed
  // where it is set (without one the run draws a seed later and holds out images again with it).
  static DiscoveryOptions fromConfig(const Config& config);
};

struct Dataset {
  std::vector<DatasetSettings> datasets;  // bucket settings after sd-scripts' adjustments
  std::vector<ImageEntry> images;
  std::vector<SkippedImage> skipped;
  std::vector<std::string> warnings;
  long long numTrainImages = 0;  // train images x repeats (sd-scripts' "train images with repeats")
  long long numRegImages = 0;    // reg images x repeats, before balancing
  long long numValidationImages = 0;  // held-out images x repeats (sd-scripts' validation dataset)

  const SubsetSettings& subsetOf(const ImageEntry& e) const { return datasets[e.datasetIndex].subsets[e.subsetIndex]; }
  const DatasetSettings& datasetOf(const ImageEntry& e) const { return datasets[e.datasetIndex]; }
  // Whether any image in use has a loss mask: then every batch carries masks (ones for images
  // without), so the training step is the same for every batch.
  bool hasLossMasks() const;
  // The skipped images and warnings as lines for the log.
  std::string report() const;
};

// Throws DatasetError when a folder is missing or nothing is left to train on (the message lists
// what was skipped and why), ConfigError for bad bucket settings, and DatasetError for caption
// files that are empty, unreadable or not UTF-8 (all of them named), and for a conditioning_data_dir
// whose images do not pair one to one with the subset's images by file name (or differ from them in
// size).
Dataset buildDataset(std::vector<DatasetSettings> datasets, const DiscoveryOptions& options = {});

}  // namespace sinter::data

#pragma once
// Typed dataset and subset settings, resolved through sd-scripts' fallback chain (subset ->
// dataset -> [general] -> the training config/command line -> defaults), for a dataset_config
// file or for folder mode (train_data_dir/reg_data_dir with "<repeats>_<class tokens>" folders).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/buckets.h"
#include "data/caption.h"
#include "data/dataset_config.h"
#include "data/image_transform.h"

namespace sinter::data {

// Bad dataset input (missing or empty folders, unreadable captions, nothing to train on).
class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SubsetSettings {
  std::string imageDir;
  std::string metadataFile;  // a fine-tuning subset: images and captions from it (metadata_file.h)
  int numRepeats = 1;
  bool isReg = false;
  std::optional<std::string> classTokens;
  std::string captionExtension = ".caption";
  bool flipAug = false;
  bool colorAug = false;  // sd-scripts' hue and gamma jitter (data/color_augment.h)
  bool randomCrop = false;
  ResizeFilter resizeFilter = ResizeFilter::Default;
  // The loss mask (data/loss_mask.h): the image's alpha channel (alpha_mask), or the red channel
  // of the image of the same name in this folder (conditioning_data_dir, with masked_loss).
  bool alphaMask = false;
  std::string conditioningDataDir;
  CaptionSettings caption;
  SourceLocation where;  // the subset's place in a dataset_config, if it came from one
};

struct DatasetSettings {
  BucketSettings buckets;
  int batchSize = 1;
  double priorLossWeight = 1.0;
  double networkMultiplier = 1.0;
  // validation_split: the share of each subset's images held out for validation (never
  // regularisation images); validation_seed: which ones (unset: the run's seed).
  double validationSplit = 0.0;
  std::optional<std::uint64_t> validationSeed;
  std::vector<SubsetSettings> subsets;
};

// The training config's dataset options as the last layer before defaults (train_batch_size is
// read as batch_size, dataset_repeats as num_repeats, as sd-scripts maps them).
ParamLayer paramLayerFromConfig(const Config& config);

// Subset layers for folder mode: one per "<repeats>_<class tokens>" subfolder, in name order.
// Other folders are skipped with a warning; a missing folder, or one without any such
// subfolder, is a DatasetError.
std::vector<ParamLayer> folderModeSubsets(const std::string& trainDataDir, const std::string& regDataDir,
                                          std::vector<std::string>& warnings);

// Resolves every dataset. `file` may be null (folder mode: one dataset of `folderSubsets`).
// Throws ConfigError for values that are wrong where they are set (naming file and line).
std::vector<DatasetSettings> resolveDatasetSettings(const DatasetConfigFile* file,
                                                    const std::vector<ParamLayer>& folderSubsets,
                                                    const ParamLayer& commandLine);

// All of the above from a training config: dataset_config when set (train_data_dir is then
// ignored with a warning); else in_json, one fine-tuning subset of train_data_dir's images with
// the captions of that metadata file (sd-scripts' fine_tune); else folder mode.
std::vector<DatasetSettings> datasetSettingsFromConfig(const Config& config, std::vector<std::string>& warnings);

}  // namespace sinter::data

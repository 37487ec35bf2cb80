#pragma once
// The metadata sd-scripts' train_network.py writes into a LoRA file: the "ss_*" keys (all values
// are Python str() of the argument, "None" when unset), and SAI ModelSpec 1.0.1 "modelspec.*"
// (library/sai_model_spec.py). no_metadata keeps only SS_METADATA_MINIMUM_KEYS plus modelspec.
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sinter::network {

// An option's value by its sd-scripts key (learning_rate, noise_offset, ...); null when unset.
using OptionLookup = std::function<nlohmann::ordered_json(const std::string& key)>;

// Facts about the run that are not options: counts, resolved values, dataset summaries.
struct LoraRunFacts {
  std::string sessionId;           // a random integer, as text
  double trainingStartedAt = 0.0;  // unix time
  int64_t numTrainImages = 0;      // images x repeats
  int64_t numValidationImages = 0;
  int64_t numRegImages = 0;
  int64_t numBatchesPerEpoch = 0;
  int64_t numEpochs = 0;
  int64_t maxTrainSteps = 0;
  nlohmann::ordered_json textEncoderLr;  // the resolved text_encoder_lr (null when unset)
  std::string optimizerName = "torch.optim.adamw.AdamW";  // as sd-scripts names the class
  std::string optimizerArgs;       // "weight_decay=0.01,betas=(0.9, 0.999)" or empty
  std::string baseModelVersion = "sdxl_base_v1-0";
  std::vector<std::pair<std::string, std::string>> networkArgs;  // ss_network_args (when given)
  std::optional<std::string> sdModelName;  // base name of pretrained_model_name_or_path
  std::optional<std::string> vaeName;
  // Folder-mode (no dataset_config) dataset summary, as train_network.py writes it.
  bool userDatasetConfig = false;
  std::optional<std::pair<int, int>> resolution;  // (width, height)
  int64_t batchSizePerDevice = 1;
  int64_t totalBatchSize = 1;
  bool enableBucket = true;
  bool bucketNoUpscale = false;
  int64_t minBucketReso = 256;
  int64_t maxBucketReso = 1024;
  nlohmann::ordered_json datasetDirs = nlohmann::ordered_json::object();     // {dir: {n_repeats, img_count}}
  nlohmann::ordered_json regDatasetDirs = nlohmann::ordered_json::object();
  nlohmann::ordered_json tagFrequency = nlohmann::ordered_json::object();    // {dir: {tag: count}}
  nlohmann::ordered_json bucketInfo;                                          // {"buckets": ..., "mean_img_ar_error": ...}
  nlohmann::ordered_json datasets;  // ss_datasets (dataset_config runs), null otherwise
  std::string implementationVersion = "sinter";  // modelspec.implementation_version
  std::string modelSpecArchitecture = "stable-diffusion-xl-v1-base";  // "/lora" is appended
  std::string modelSpecImplementation = "https://github.com/Stability-AI/generative-models";
  bool modelSpecPredictionType = true;
  std::vector<std::string> familyOptionKeys;             // ss_<key> = str(option), the family's own
  std::map<std::string, std::string> familyValues;       // ss_* keys with fixed values (ss_model_type)
};

using Metadata = std::map<std::string, std::string>;

// The ss_* keys set at the start of training (train_network.py L1004-1221).
Metadata buildSsMetadata(const OptionLookup& option, const LoraRunFacts& facts);
// What sai_model_spec.build_metadata says of a file the LoRA tools write (merge_lora,
// svd_merge_lora, extract_lora_from_models): the model it is for.
struct ModelSpecBasics {
  std::string architecture;    // "stable-diffusion-xl-v1-base" (a LoRA's gets "/lora" appended)
  std::string implementation;  // "https://github.com/Stability-AI/generative-models"
  std::string resolution;      // "1024x1024"
  std::string predictionType;  // "epsilon", "v", or "" where the family writes none (FLUX)
};
// modelspec.* of such a file: title (the output's file name without extension), the inputs'
// titles as merged_from ("" leaves it out), and the date of `timestamp`.
Metadata toolModelSpec(const ModelSpecBasics& basics, bool lora, const std::string& title, const std::string& mergedFrom,
                       double timestamp);

// Set on every save: ss_training_finished_at, ss_steps, ss_epoch.
// Seconds since the epoch, as Python's time.time() that sd-scripts stamps its files with.
double unixTimeNow();

void stampSave(Metadata& metadata, double finishedAt, int64_t steps, int64_t epoch);
// SS_METADATA_MINIMUM_KEYS: ss_v2, ss_base_model_version, ss_network_module/dim/alpha/args.
Metadata minimumMetadata(const Metadata& metadata);
// modelspec.* for a LoRA (architecture ".../lora", title "LoRA@<time>" by default) or, with
// `lora` false, for a full checkpoint (the bare architecture, "Checkpoint@<time>").
Metadata buildModelSpec(const OptionLookup& option, const LoraRunFacts& facts, double timestamp, bool lora = true);
// modelspec.* for a textual inversion embedding (get_sai_model_spec with textual_inversion): the
// architecture ".../textual-inversion", Stability AI's implementation for every family, and the
// title "TextualInversion@<time>" where neither metadata_title nor output_name is set.
Metadata buildTextualInversionModelSpec(const OptionLookup& option, const LoraRunFacts& facts, double timestamp);
// What a save writes: full (or minimum with no_metadata) ss_* plus modelspec.*.
Metadata metadataForSave(const Metadata& ssMetadata, const Metadata& modelSpec, bool noMetadata);

}  // namespace sinter::network

#include "data/dataset_settings.h"

#include <algorithm>
#include <filesystem>

#include "core/registry.h"
#include "data/image_decode.h"
#include "data/pivotal_embedding_specs.h"
#include "data/textual_inversion_captions.h"

namespace sinter::data {
namespace fs = std::filesystem;

namespace {

// Every key the chain can resolve, with the training-config option that feeds it.
const std::vector<std::pair<const char*, const char*>>& configKeys() {
  static const std::vector<std::pair<const char*, const char*>> keys = {
      {"batch_size", "train_batch_size"}, {"num_repeats", "dataset_repeats"},
      {"resolution", "resolution"}, {"enable_bucket", "enable_bucket"},
      {"min_bucket_reso", "min_bucket_reso"}, {"max_bucket_reso", "max_bucket_reso"},
      {"bucket_reso_steps", "bucket_reso_steps"}, {"bucket_no_upscale", "bucket_no_upscale"},
      {"caption_extension", "caption_extension"}, {"shuffle_caption", "shuffle_caption"},
      {"keep_tokens", "keep_tokens"}, {"keep_tokens_separator", "keep_tokens_separator"},
      {"secondary_separator", "secondary_separator"}, {"caption_separator", "caption_separator"},
      {"enable_wildcard", "enable_wildcard"}, {"caption_prefix", "caption_prefix"},
      {"caption_suffix", "caption_suffix"}, {"caption_dropout_rate", "caption_dropout_rate"},
      {"caption_dropout_every_n_epochs", "caption_dropout_every_n_epochs"},
      {"caption_tag_dropout_rate", "caption_tag_dropout_rate"}, {"token_warmup_min", "token_warmup_min"},
      {"token_warmup_step", "token_warmup_step"}, {"flip_aug", "flip_aug"}, {"random_crop", "random_crop"},
      {"color_aug", "color_aug"}, {"resize_interpolation", "resize_interpolation"},
      {"prior_loss_weight", "prior_loss_weight"}, {"network_multiplier", "network_multiplier"},
      {"alpha_mask", "alpha_mask"}, {"conditioning_data_dir", "conditioning_data_dir"},
      {"validation_split", "validation_split"}, {"validation_seed", "validation_seed"},
  };
  return keys;
}

// Looks a key up through the layers, first set wins.
class Chain {
 public:
  explicit Chain(std::vector<const ParamLayer*> layers) : layers_(std::move(layers)) {}
  const LocatedValue* find(const std::string& key) const {
    for (const ParamLayer* l : layers_) {
      if (!l) continue;
      const auto it = l->find(key);
      if (it != l->end() && !isUnset(it->second.value)) return &it->second;
    }
    return nullptr;
  }
  bool getBool(const std::string& key, bool fallback) const {
    const auto* v = find(key);
    return v ? asBool(v->value, fallback) : fallback;
  }
  long long getInt(const std::string& key, long long fallback) const {
    const auto* v = find(key);
    return v ? asInt(v->value, fallback) : fallback;
  }
  double getDouble(const std::string& key, double fallback) const {
    const auto* v = find(key);
    return v ? asDouble(v->value, fallback) : fallback;
  }
  std::string getString(const std::string& key, const std::string& fallback) const {
    const auto* v = find(key);
    return v ? asString(v->value) : fallback;
  }

 private:
  std::vector<const ParamLayer*> layers_;
};

[[noreturn]] void failAt(const LocatedValue* v, const std::string& key, const std::string& message) {
  throw ConfigError({{Severity::Error, v ? v->where : SourceLocation{}, key, message}});
}

Resolution resolutionFrom(const Chain& chain) {
  const LocatedValue* v = chain.find("resolution");
  if (!v) failAt(nullptr, "resolution", "resolution is required (e.g. 1024 or \"1024,768\")");
  try {
    if (const auto* list = std::get_if<StringList>(&v->value)) {
      if (list->size() == 1) return parseResolution((*list)[0]);
      if (list->size() == 2) return parseResolution((*list)[0] + "," + (*list)[1]);
      failAt(v, "resolution", "resolution must be SIZE or [WIDTH, HEIGHT]");
    }
    if (const auto* i = std::get_if<long long>(&v->value)) return parseResolution(std::to_string(*i));
    return parseResolution(asString(v->value));
  } catch (const std::invalid_argument& e) {
    failAt(v, "resolution", e.what());
  }
}

SubsetSettings resolveSubset(const Chain& c, const ParamLayer& subsetLayer) {
  SubsetSettings s;
  s.imageDir = c.getString("image_dir", "");
  s.metadataFile = c.getString("metadata_file", "");
  s.numRepeats = static_cast<int>(c.getInt("num_repeats", 1));
  s.isReg = c.getBool("is_reg", false);
  if (const auto* v = c.find("class_tokens")) s.classTokens = asString(v->value);
  s.captionExtension = c.getString("caption_extension", ".caption");
  s.flipAug = c.getBool("flip_aug", false);
  s.colorAug = c.getBool("color_aug", false);
  s.randomCrop = c.getBool("random_crop", false);
  s.alphaMask = c.getBool("alpha_mask", false);
  s.conditioningDataDir = c.getString("conditioning_data_dir", "");
  if (!s.conditioningDataDir.empty()) {
    // sd-scripts' ControlNet-style subsets (all it reads conditioning_data_dir for) have no
    // alpha_mask and no metadata_file.
    if (const auto it = subsetLayer.find("alpha_mask"); it != subsetLayer.end() && asBool(it->second.value, false))
      failAt(&it->second, "alpha_mask",
             "a subset with conditioning_data_dir takes its mask from there; alpha_mask is for subsets without one");
    if (!s.metadataFile.empty())
      failAt(c.find("conditioning_data_dir"), "conditioning_data_dir",
             "conditioning_data_dir pairs mask images with an image folder's images; a fine-tuning subset "
             "(metadata_file) cannot have one");
  }
  if (const auto* v = c.find("resize_interpolation")) {
    try {
      s.resizeFilter = resizeFilterFromString(asString(v->value));
    } catch (const std::invalid_argument& e) {
      failAt(v, "resize_interpolation", e.what());
    }
  }
  CaptionSettings& cap = s.caption;
  cap.captionPrefix = c.getString("caption_prefix", "");
  cap.captionSuffix = c.getString("caption_suffix", "");
  cap.shuffleCaption = c.getBool("shuffle_caption", false);
  cap.captionSeparator = c.getString("caption_separator", ",");
  cap.keepTokens = static_cast<int>(c.getInt("keep_tokens", 0));
  cap.keepTokensSeparator = c.getString("keep_tokens_separator", "");
  cap.secondarySeparator = c.getString("secondary_separator", "");
  cap.enableWildcard = c.getBool("enable_wildcard", false);
  cap.captionDropoutRate = c.getDouble("caption_dropout_rate", 0.0);
  cap.captionDropoutEveryNEpochs = static_cast<int>(c.getInt("caption_dropout_every_n_epochs", 0));
  cap.captionTagDropoutRate = c.getDouble("caption_tag_dropout_rate", 0.0);
  cap.tokenWarmupMin = static_cast<int>(c.getInt("token_warmup_min", 1));
  cap.tokenWarmupStep = c.getDouble("token_warmup_step", 0.0);
  if (const auto it = subsetLayer.find("image_dir"); it != subsetLayer.end()) s.where = it->second.where;
  return s;
}

DatasetSettings resolveDataset(const ParamLayer* datasetLayer, const ParamLayer* general,
                               const std::vector<ParamLayer>& subsets, const ParamLayer& commandLine) {
  const Chain c({datasetLayer, general, &commandLine});
  DatasetSettings d;
  d.buckets.resolution = resolutionFrom(c);
  d.buckets.enableBucket = c.getBool("enable_bucket", false);
  d.buckets.minBucketReso = static_cast<int>(c.getInt("min_bucket_reso", 256));
  d.buckets.maxBucketReso = static_cast<int>(c.getInt("max_bucket_reso", 1024));
  d.buckets.bucketResoSteps = static_cast<int>(c.getInt("bucket_reso_steps", 64));
  d.buckets.bucketNoUpscale = c.getBool("bucket_no_upscale", false);
  d.batchSize = static_cast<int>(c.getInt("batch_size", 1));
  if (d.batchSize < 1) failAt(c.find("batch_size"), "batch_size", "batch size must be at least 1");
  d.priorLossWeight = c.getDouble("prior_loss_weight", 1.0);
  d.networkMultiplier = c.getDouble("network_multiplier", 1.0);
  d.validationSplit = c.getDouble("validation_split", 0.0);
  if (!(d.validationSplit >= 0.0 && d.validationSplit < 1.0))
    failAt(c.find("validation_split"), "validation_split",
           "validation_split must be at least 0 and below 1 (the share of each subset's images held out), not " +
               asString(c.find("validation_split")->value));
  if (const auto* v = c.find("validation_seed")) {
    const long long seed = asInt(v->value, -1);
    if (seed < 0 || seed > 4294967295LL) failAt(v, "validation_seed", "validation_seed must be an integer from 0 to 4294967295");
    d.validationSeed = static_cast<std::uint64_t>(seed);
  }
  for (const auto& subset : subsets)
    d.subsets.push_back(resolveSubset(Chain({&subset, datasetLayer, general, &commandLine}), subset));
  // sd-scripts: a dataset is DreamBooth-style or fine-tuning, by whether its subsets have metadata_file.
  const auto fineTuning = [](const SubsetSettings& s) { return !s.metadataFile.empty(); };
  const bool anyFineTuning = std::any_of(d.subsets.begin(), d.subsets.end(), fineTuning);
  if (anyFineTuning && !std::all_of(d.subsets.begin(), d.subsets.end(), fineTuning)) {
    const SubsetSettings& other = *std::find_if(d.subsets.begin(), d.subsets.end(), [&](const SubsetSettings& s) { return !fineTuning(s); });
    const std::string at = other.where.file.empty() ? "" : " (" + other.where.file + ":" + std::to_string(other.where.line) + ")";
    throw DatasetError("a dataset mixes fine-tuning subsets (metadata_file) with image folder subsets" + at +
                       "; sd-scripts keeps them in separate [[datasets]]");
  }
  for (const SubsetSettings& s : d.subsets)
    if (fineTuning(s) && s.isReg)
      throw DatasetError("metadata_file " + s.metadataFile + ": a fine-tuning subset cannot be is_reg (regularisation images are DreamBooth's)");
  return d;
}

}  // namespace

ParamLayer paramLayerFromConfig(const Config& config) {
  ParamLayer layer;
  for (const auto& [datasetKey, optionKey] : configKeys()) {
    if (!findOption(optionKey)) continue;  // not a Sinter option (yet): the dataset default applies
    const Value v = config.get(optionKey);
    if (isUnset(v)) continue;
    layer[datasetKey] = {v, config.whereSet(optionKey)};
  }
  return layer;
}

std::vector<ParamLayer> folderModeSubsets(const std::string& trainDataDir, const std::string& regDataDir,
                                          std::vector<std::string>& warnings) {
  std::vector<ParamLayer> out;
  auto scan = [&](const std::string& base, bool isReg) {
    const char* option = isReg ? "reg_data_dir" : "train_data_dir";
    std::error_code ec;
    if (!fs::exists(base, ec)) throw DatasetError(std::string(option) + " does not exist: " + base);
    if (!fs::is_directory(base, ec)) throw DatasetError(std::string(option) + " is not a folder: " + base);
    std::vector<fs::path> dirs;
    bool looseImages = false;
    for (const auto& entry : fs::directory_iterator(base, ec)) {
      if (entry.is_directory()) dirs.push_back(entry.path());
      else if (hasImageExtension(entry.path().string())) looseImages = true;
    }
    if (ec) throw DatasetError(std::string(option) + " cannot be read: " + base + ": " + ec.message());
    std::sort(dirs.begin(), dirs.end());
    size_t found = 0;
    for (const auto& dir : dirs) {
      const std::string name = dir.filename().string();
      const auto underscore = name.find('_');
      const std::string head = name.substr(0, underscore);
      long long repeats = 0;
      size_t used = 0;
      try {
        repeats = std::stoll(head, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      const bool digits = !head.empty() && head.find_first_not_of("0123456789") == std::string::npos;
      if ((digits && used == 0) || repeats > kMaxRepeats)
        throw DatasetError("folder " + dir.string() + " asks for " + head + " repeats, more than the " + std::to_string(kMaxRepeats) +
                           " a subset may have (is its number a typo?)");
      if (used == 0 || used != head.size()) {
        warnings.push_back("ignoring folder without a repeat count (expected \"<repeats>_<class tokens>\"): " +
                           dir.string());
        continue;
      }
      if (repeats < 1) {
        warnings.push_back("ignoring folder with " + std::to_string(repeats) + " repeats: " + dir.string());
        continue;
      }
      ParamLayer subset;
      subset["image_dir"] = {dir.string(), {}};
      subset["num_repeats"] = {repeats, {}};
      subset["is_reg"] = {isReg, {}};
      subset["class_tokens"] = {underscore == std::string::npos ? std::string() : name.substr(underscore + 1), {}};
      out.push_back(std::move(subset));
      ++found;
    }
    if (found == 0)
      throw DatasetError(std::string(option) + " has no \"<repeats>_<class tokens>\" subfolders (e.g. \"10_sks dog\"): " +
                         base + (looseImages ? " (its images must go into such a subfolder)" : ""));
  };
  if (trainDataDir.empty()) throw DatasetError("no dataset: set train_data_dir or dataset_config");
  scan(trainDataDir, false);
  if (!regDataDir.empty()) scan(regDataDir, true);
  return out;
}

std::vector<DatasetSettings> resolveDatasetSettings(const DatasetConfigFile* file,
                                                    const std::vector<ParamLayer>& folderSubsets,
                                                    const ParamLayer& commandLine) {
  std::vector<DatasetSettings> out;
  if (!file) {
    out.push_back(resolveDataset(nullptr, nullptr, folderSubsets, commandLine));
    return out;
  }
  for (const auto& ds : file->datasets) out.push_back(resolveDataset(&ds.params, &file->general, ds.subsets, commandLine));
  return out;
}

namespace {

// masked_loss is what turns conditioning_data_dir on (sd-scripts accepts the key only then), and
// asks for a mask: without any source it would train unmasked, silently.
void checkMaskSources(const Config& config, const std::vector<DatasetSettings>& datasets) {
  const bool maskedLoss = config.getBool("masked_loss");
  bool anyMask = false;
  for (const DatasetSettings& d : datasets)
    for (const SubsetSettings& s : d.subsets) {
      if (!s.conditioningDataDir.empty() && !maskedLoss) {
        const SourceLocation where = s.where.file.empty() ? config.whereSet("conditioning_data_dir") : s.where;
        throw ConfigError({{Severity::Error, where, "conditioning_data_dir",
                            "conditioning_data_dir (" + s.conditioningDataDir +
                                ") holds loss masks, read only with masked_loss = true"}});
      }
      anyMask = anyMask || s.alphaMask || !s.conditioningDataDir.empty();
    }
  if (maskedLoss && !anyMask)
    throw ConfigError({{Severity::Error, config.whereSet("masked_loss"), "masked_loss",
                        "masked_loss needs masks: set conditioning_data_dir (a folder of mask images named as the "
                        "training images) or alpha_mask (the images' alpha channels)"}});
}

// Textual inversion's captions (train_textual_inversion.py): its replacement on every subset, and
// no caption dropout (its dataset takes none; the options do not apply to it).
void applyTextualInversion(const Config& config, std::vector<DatasetSettings>& datasets) {
  if (config.tab() != Tab::TextualInversion) return;
  const std::optional<CaptionReplacement> replacement = TextualInversionCaptions::fromConfig(config).captionReplacement();
  for (DatasetSettings& d : datasets)
    for (SubsetSettings& s : d.subsets) {
      s.caption.captionDropoutRate = 0;
      s.caption.captionDropoutEveryNEpochs = 0;
      s.caption.captionTagDropoutRate = 0;
      if (replacement) s.caption.replacements.push_back(*replacement);
    }
}

// Pivotal tuning's embeddings (a LoRA run's `embeddings`): each token_string of several vectors
// becomes its tokens in every caption, as textual inversion's does; caption dropout stays the LoRA's.
void applyPivotalEmbeddings(const Config& config, std::vector<DatasetSettings>& datasets) {
  if (config.tab() != Tab::LoRA || config.getList("embeddings").empty()) return;
  const std::vector<CaptionReplacement> replacements = pivotalCaptionReplacements(pivotalEmbeddingSpecs(config));
  for (DatasetSettings& d : datasets)
    for (SubsetSettings& s : d.subsets) s.caption.replacements.insert(s.caption.replacements.end(), replacements.begin(), replacements.end());
}

std::vector<DatasetSettings> checked(const Config& config, std::vector<DatasetSettings> datasets) {
  checkMaskSources(config, datasets);
  applyTextualInversion(config, datasets);
  applyPivotalEmbeddings(config, datasets);
  return datasets;
}

}  // namespace

std::vector<DatasetSettings> datasetSettingsFromConfig(const Config& config, std::vector<std::string>& warnings) {
  const ParamLayer commandLine = paramLayerFromConfig(config);
  const std::string datasetConfig = config.getString("dataset_config");
  if (!datasetConfig.empty()) {
    if (!config.getString("train_data_dir").empty())
      warnings.push_back("train_data_dir is ignored because dataset_config is set");
    const DatasetConfigFile file = loadDatasetConfigFile(datasetConfig);
    return checked(config, resolveDatasetSettings(&file, {}, commandLine));
  }
  if (const std::string inJson = config.getString("in_json"); !inJson.empty()) {
    if (!config.getString("reg_data_dir").empty()) warnings.push_back("reg_data_dir is ignored with in_json (a fine-tuning dataset)");
    ParamLayer subset;
    subset["image_dir"] = {config.getString("train_data_dir"), config.whereSet("train_data_dir")};
    subset["metadata_file"] = {inJson, config.whereSet("in_json")};
    return checked(config, resolveDatasetSettings(nullptr, {subset}, commandLine));
  }
  const auto subsets =
      folderModeSubsets(config.getString("train_data_dir"), config.getString("reg_data_dir"), warnings);
  return checked(config, resolveDatasetSettings(nullptr, subsets, commandLine));
}

}  // namespace sinter::data

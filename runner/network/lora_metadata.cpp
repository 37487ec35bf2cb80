#include "network/lora_metadata.h"

#include <chrono>
#include <ctime>

#include "network/python_format.h"

namespace sinter::network {

namespace {

using json = nlohmann::ordered_json;

bool truthy(const json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0.0;
  if (v.is_string()) return !v.get<std::string>().empty();
  return !v.empty();
}

// ss_<key> = str(args.<key>), in the order train_network.py writes them.
const char* const kPlainOptionKeys[] = {
    "gradient_accumulation_steps", "lr_warmup_steps", "lr_scheduler", "network_module", "network_dim",
    "network_alpha", "network_dropout", "mixed_precision"};
const char* const kLaterOptionKeys[] = {
    "clip_skip", "max_token_length"};
const char* const kNoiseOptionKeys[] = {
    "noise_offset", "multires_noise_iterations", "multires_noise_discount", "adaptive_noise_scale",
    "zero_terminal_snr", "training_comment"};
const char* const kTailOptionKeys[] = {
    "max_grad_norm", "caption_dropout_rate", "caption_dropout_every_n_epochs", "caption_tag_dropout_rate",
    "face_crop_aug_range", "prior_loss_weight", "min_snr_gamma", "scale_weight_norms", "ip_noise_gamma"};
const char* const kHuberOptionKeys[] = {"loss_type", "huber_schedule", "huber_scale", "huber_c"};
const char* const kValidationOptionKeys[] = {"validation_seed", "validation_split", "max_validation_steps",
                                             "validate_every_n_epochs", "validate_every_n_steps",
                                             "resize_interpolation"};

const char* const kMinimumKeys[] = {"ss_v2", "ss_base_model_version", "ss_network_module", "ss_network_dim",
                                    "ss_network_alpha", "ss_network_args"};

std::string isoLocalTime(double timestamp) {
  const std::time_t t = static_cast<std::time_t>(timestamp);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

}  // namespace

Metadata buildSsMetadata(const OptionLookup& option, const LoraRunFacts& facts) {
  Metadata m;
  auto str = [&](const std::string& ssKey, const json& value) { m[ssKey] = pythonStr(value); };
  auto fromOption = [&](const std::string& key) { str("ss_" + key, option(key)); };
  auto boolOption = [&](const std::string& ssKey, const std::string& key) { str(ssKey, truthy(option(key))); };

  str("ss_session_id", facts.sessionId);
  str("ss_training_started_at", facts.trainingStartedAt);
  fromOption("output_name");
  fromOption("learning_rate");
  str("ss_text_encoder_lr", facts.textEncoderLr);
  fromOption("unet_lr");
  str("ss_num_train_images", facts.numTrainImages);
  str("ss_num_validation_images", facts.numValidationImages);
  str("ss_num_reg_images", facts.numRegImages);
  str("ss_num_batches_per_epoch", facts.numBatchesPerEpoch);
  str("ss_num_epochs", facts.numEpochs);
  boolOption("ss_gradient_checkpointing", "gradient_checkpointing");
  str("ss_max_train_steps", facts.maxTrainSteps);
  for (const char* key : kPlainOptionKeys) fromOption(key);
  boolOption("ss_full_fp16", "full_fp16");
  boolOption("ss_v2", "v2");
  str("ss_base_model_version", facts.baseModelVersion);
  for (const char* key : kLaterOptionKeys) fromOption(key);
  boolOption("ss_cache_latents", "cache_latents");
  fromOption("seed");
  str("ss_lowram", truthy(option("lowram")));
  for (const char* key : kNoiseOptionKeys) fromOption(key);
  str("ss_optimizer", facts.optimizerName + (facts.optimizerArgs.empty() ? "" : "(" + facts.optimizerArgs + ")"));
  for (const char* key : kTailOptionKeys) fromOption(key);
  boolOption("ss_debiased_estimation", "debiased_estimation_loss");
  fromOption("noise_offset_random_strength");
  fromOption("ip_noise_gamma_random_strength");
  for (const char* key : kHuberOptionKeys) fromOption(key);
  boolOption("ss_fp8_base", "fp8_base");
  boolOption("ss_fp8_base_unet", "fp8_base_unet");
  for (const char* key : kValidationOptionKeys) fromOption(key);
  for (const std::string& key : facts.familyOptionKeys) fromOption(key);
  for (const auto& [key, value] : facts.familyValues) m[key] = value;

  if (facts.userDatasetConfig) {
    m["ss_datasets"] = pythonJsonDumps(facts.datasets);
    m["ss_tag_frequency"] = pythonJsonDumps(facts.tagFrequency);
    m["ss_dataset_dirs"] = pythonJsonDumps(facts.datasetDirs);
  } else {
    str("ss_batch_size_per_device", facts.batchSizePerDevice);
    str("ss_total_batch_size", facts.totalBatchSize);
    // args.resolution is a (width, height) tuple by then.
    m["ss_resolution"] = facts.resolution ? "(" + std::to_string(facts.resolution->first) + ", " +
                                                std::to_string(facts.resolution->second) + ")"
                                          : "None";
    boolOption("ss_color_aug", "color_aug");
    boolOption("ss_flip_aug", "flip_aug");
    boolOption("ss_random_crop", "random_crop");
    boolOption("ss_shuffle_caption", "shuffle_caption");
    str("ss_enable_bucket", facts.enableBucket);
    str("ss_bucket_no_upscale", facts.bucketNoUpscale);
    str("ss_min_bucket_reso", facts.minBucketReso);
    str("ss_max_bucket_reso", facts.maxBucketReso);
    fromOption("keep_tokens");
    m["ss_dataset_dirs"] = pythonJsonDumps(facts.datasetDirs);
    m["ss_reg_dataset_dirs"] = pythonJsonDumps(facts.regDatasetDirs);
    m["ss_tag_frequency"] = pythonJsonDumps(facts.tagFrequency);
    m["ss_bucket_info"] = pythonJsonDumps(facts.bucketInfo);
  }
  if (!facts.networkArgs.empty()) {
    json args = json::object();
    for (const auto& [k, v] : facts.networkArgs) args[k] = v;
    m["ss_network_args"] = pythonJsonDumps(args);
  }
  if (facts.sdModelName) m["ss_sd_model_name"] = *facts.sdModelName;
  if (facts.vaeName) m["ss_vae_name"] = *facts.vaeName;
  return m;
}

double unixTimeNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void stampSave(Metadata& metadata, double finishedAt, int64_t steps, int64_t epoch) {
  metadata["ss_training_finished_at"] = pythonFloatRepr(finishedAt);
  metadata["ss_steps"] = std::to_string(steps);
  metadata["ss_epoch"] = std::to_string(epoch);
}

Metadata minimumMetadata(const Metadata& metadata) {
  Metadata out;
  for (const char* key : kMinimumKeys) {
    auto it = metadata.find(key);
    if (it != metadata.end()) out.insert(*it);
  }
  return out;
}

Metadata buildModelSpec(const OptionLookup& option, const LoraRunFacts& facts, double timestamp, bool lora) {
  Metadata m;
  m["modelspec.sai_model_spec"] = "1.0.1";
  m["modelspec.architecture"] = facts.modelSpecArchitecture + (lora ? "/lora" : "");
  m["modelspec.implementation"] = facts.modelSpecImplementation;
  m["modelspec.implementation_version"] = facts.implementationVersion;
  const json title = option("metadata_title");
  const json outputName = option("output_name");
  if (truthy(title)) m["modelspec.title"] = title.get<std::string>();
  else if (truthy(outputName)) m["modelspec.title"] = outputName.get<std::string>();
  else m["modelspec.title"] = (lora ? "LoRA@" : "Checkpoint@") + pythonFloatRepr(timestamp);
  m["modelspec.date"] = isoLocalTime(timestamp);
  const std::pair<int, int> reso = facts.resolution.value_or(std::make_pair(1024, 1024));
  m["modelspec.resolution"] = std::to_string(reso.first) + "x" + std::to_string(reso.second);
  if (facts.modelSpecPredictionType) m["modelspec.prediction_type"] = truthy(option("v_parameterization")) ? "v" : "epsilon";
  const json minT = option("min_timestep"), maxT = option("max_timestep");
  if (!minT.is_null() || !maxT.is_null())
    m["modelspec.timestep_range"] = pythonStr(minT.is_null() ? json(0) : minT) + "," +
                                    pythonStr(maxT.is_null() ? json(1000) : maxT);
  const json clipSkip = option("clip_skip");
  if (!clipSkip.is_null()) m["modelspec.encoder_layer"] = pythonStr(clipSkip);
  for (const char* field : {"author", "description", "license", "tags"}) {
    const json v = option(std::string("metadata_") + field);
    if (truthy(v)) m[std::string("modelspec.") + field] = pythonStr(v);
  }
  return m;
}

Metadata buildTextualInversionModelSpec(const OptionLookup& option, const LoraRunFacts& facts, double timestamp) {
  Metadata m = buildModelSpec(option, facts, timestamp, /*lora=*/false);
  m["modelspec.architecture"] = facts.modelSpecArchitecture + "/textual-inversion";
  m["modelspec.implementation"] = "https://github.com/Stability-AI/generative-models";  // sai_model_spec's rule for TI
  if (!truthy(option("metadata_title")) && !truthy(option("output_name")))
    m["modelspec.title"] = "TextualInversion@" + pythonFloatRepr(timestamp);
  return m;
}

Metadata toolModelSpec(const ModelSpecBasics& basics, bool lora, const std::string& title, const std::string& mergedFrom,
                       double timestamp) {
  Metadata m;
  m["modelspec.sai_model_spec"] = "1.0.1";
  if (!basics.architecture.empty()) m["modelspec.architecture"] = basics.architecture + (lora ? "/lora" : "");
  if (!basics.implementation.empty()) m["modelspec.implementation"] = basics.implementation;
  m["modelspec.implementation_version"] = LoraRunFacts().implementationVersion;
  m["modelspec.title"] = title;
  m["modelspec.date"] = isoLocalTime(timestamp);
  if (!basics.resolution.empty()) m["modelspec.resolution"] = basics.resolution;
  if (!basics.predictionType.empty()) m["modelspec.prediction_type"] = basics.predictionType;
  if (!mergedFrom.empty()) m["modelspec.merged_from"] = mergedFrom;
  return m;
}

Metadata metadataForSave(const Metadata& ssMetadata, const Metadata& modelSpec, bool noMetadata) {
  Metadata out = noMetadata ? minimumMetadata(ssMetadata) : ssMetadata;
  for (const auto& kv : modelSpec) out[kv.first] = kv.second;
  return out;
}

}  // namespace sinter::network

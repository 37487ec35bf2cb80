#include "train/sd/sd_family.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/text_encoders/sd_text_encoding.h"
#include "models/text_encoders/sdxl_text_encoding.h"
#include "network/lora_targets.h"
#include "text/clip_token_chunks.h"
#include "train/base/config_values.h"
#include "train/base/device_info.h"
#include "train/base/mixed_precision.h"
#include "train/objectives/masked_loss.h"
#include "train/objectives/validation_timesteps.h"
#include "train/parts/cache_building.h"

namespace sinter::train {

namespace fs = std::filesystem;

namespace {

const char* versionName(models::SdVersion version) { return version == models::SdVersion::V1 ? "SD 1.x" : "SD 2.x"; }

}  // namespace

SdFamilyOptions SdFamilyOptions::fromConfig(const Config& config, models::SdVersion version, torch::Dtype computeDtype) {
  SdFamilyOptions o;
  o.version = version;
  o.checkpoint = config.getString("pretrained_model_name_or_path");
  o.vae = config.getString("vae");
  o.clipTokenizer = config.getString("clip_tokenizer");
  o.maxTokenLength = isUnset(config.get("max_token_length")) ? 75 : static_cast<int>(config.getInt("max_token_length"));
  o.clipSkip = isUnset(config.get("clip_skip")) ? 1 : static_cast<int>(config.getInt("clip_skip"));
  o.checkpointOffload = config.getBool("cpu_offload_checkpointing");
  o.gradientCheckpointing = config.getBool("gradient_checkpointing") || o.checkpointOffload;
  o.cacheLatentsToDisk = config.getBool("cache_latents_to_disk");
  o.cacheLatents = config.getBool("cache_latents") || o.cacheLatentsToDisk;
  o.cacheTextToDisk = config.getBool("cache_text_encoder_outputs_to_disk");
  o.cacheText = config.getBool("cache_text_encoder_outputs") || o.cacheTextToDisk;
  o.vaeBatchSize = static_cast<int>(config.getInt("vae_batch_size"));
  o.sampleSampler = config.getString("sample_sampler");
  o.step = UnetStepOptions::fromConfig(config, computeDtype);
  return o;
}

SdFamily::SdFamily(const RunContext& run, models::SdVersion version)
    : options_(SdFamilyOptions::fromConfig(run.config, version, run.precision.weightDtype)),
      device_(run.device),
      seed_(run.seed),
      parking_(run.device),
      tokenizer_(text::ClipTokenizer::fromPath(options_.clipTokenizer)) {
  spdlog::info("loading {}", options_.checkpoint);
  models_ = models::loadSdCheckpoint(options_.checkpoint);
  if (models_.config.version != version)
    throw models::CheckpointError(options_.checkpoint + " is an " + versionName(models_.config.version) +
                                  " checkpoint, but the run trains " + versionName(version) + " (model_family, v2)");
  if (!options_.vae.empty()) {
    io::SafetensorsFile file(options_.vae);
    // A separate VAE file is stored either bare or with the checkpoint's prefix.
    const std::string prefix =
        file.has(std::string(models::SdxlVaeImpl::kPrefix) + "encoder.conv_in.weight") ? models::SdxlVaeImpl::kPrefix : "";
    models::SdxlVaeConfig vaeConfig = models::SdxlVaeImpl::inferFromCheckpoint(file, prefix);
    vaeConfig.scalingFactor = models::kSdVaeScalingFactor;
    models_.vae = models::SdxlVae(vaeConfig);
    models_.vae->loadFromCheckpoint(file, prefix);
  }
  textLayersToRun_ = models::sdTextLayersToRun(version, models_.config.text.layers, options_.clipSkip);
  // As SdxlModelSet::toDevice: the models a run may train in their dtype, the VAE in sd-scripts' vae_dtype.
  for (torch::nn::Module* m : {static_cast<torch::nn::Module*>(models_.unet.get()), &models_.textEncoder()}) {
    m->to(device_);
    castFrozen(*m, run.precision.trainableModelDtype());
  }
  models_.vae->to(device_);
  castFrozen(*models_.vae, run.precision.vaeDtype());
  models_.unet->setFusedKernels(run.compile.fuseKernels);
  step_ = std::make_unique<UnetTrainStep>(models_.unet, options_.step, device_, run.noiseSeed());
  if (!options_.cacheText) step_->useStagedConditioning(stagedConditioning());
}

StagedConditioning SdFamily::stagedConditioning() {
  StagedConditioning c;
  c.makeInputs = [](const StepShape& shape) {
    const int64_t chunks = models::chunksOfContextLength(shape.tokens);
    return StaticBuffers{{"clip_ids", torch::zeros({shape.batch, chunks, text::ClipTokenizer::kContextLength}, torch::kLong)}};
  };
  c.encode = [this](const StaticBuffers& in) {
    std::optional<torch::NoGradGuard> noGrad;
    if (!textEncodersTrain_) noGrad.emplace();
    return UnetConditioning{encode({{"clip", in.at("clip_ids")}}), {}};
  };
  return c;
}

FamilyFacts SdFamily::facts() const {
  const bool v1 = options_.version == models::SdVersion::V1;
  FamilyFacts f;
  f.familyName = v1 ? "sd15" : "sd2";
  // train_network.py's model_util.get_model_version_str_for_sd1_sd2.
  f.baseModelVersion = std::string(v1 ? "sd_v1" : "sd_v2") + (options_.step.loss.vPrediction ? "_v" : "");
  // sai_model_spec.py: v1, and v2 by resolution and prediction type.
  f.modelSpecArchitecture = v1 ? "stable-diffusion-v1" : options_.step.loss.vPrediction ? "stable-diffusion-v2-768-v" : "stable-diffusion-v2-512";
  f.modelSpecImplementation = "diffusers";
  f.checkpointFile = fs::path(options_.checkpoint).filename().string();
  if (!options_.vae.empty()) f.vaeFile = fs::path(options_.vae).filename().string();
  // ss_v2 says what was trained, also where the config left v2 to the checkpoint's detection.
  f.metadataValues["ss_v2"] = v1 ? "False" : "True";
  return f;
}

std::vector<TrainableModel> SdFamily::trainableModels() {
  using network::LoraComponent;
  const int64_t resBlocks = models_.config.unet.numResBlocks;
  // sd-scripts' SD 2.x text encoder has one layer less than the checkpoint's.
  const int64_t textLayers = options_.version == models::SdVersion::V2 ? models_.config.text.layers - 1 : 0;
  return {{"U-Net", false, models_.unet.get(), network::sdLoraRule(LoraComponent::Unet, resBlocks)},
          {"Text Encoder", true, &models_.textEncoder(), network::sdLoraRule(LoraComponent::TextEncoder, resBlocks, textLayers)}};
}

void SdFamily::setTraining(bool textEncoders) {
  textEncodersTrain_ = textEncoders;
  models_.unet->train();
  models_.vae->eval();
  models_.textEncoder().train(textEncoders);
  models_.unet->setGradientCheckpointing(options_.gradientCheckpointing, models::anyLoraDropout(*models_.unet));
  models_.unet->setCheckpointOffload(options_.checkpointOffload);
}

text::ClipPadding sdTextPadding(models::SdVersion version) {
  return version == models::SdVersion::V1 ? text::ClipPadding::EndOfText : text::ClipPadding::Zero;
}

TextualInversionTargets sdEmbeddingTargets(text::ClipTokenizer& tokenizer, models::SdCheckpoint& models) {
  return {&tokenizer, {{"emb_params", models.textTransformer().get()}}};
}

TextualInversionTargets SdFamily::textualInversionTargets() { return sdEmbeddingTargets(tokenizer_, models_); }

data::TokenIds SdFamily::tokenize(const std::vector<std::string>& captions) const {
  const text::ClipPadding padding = sdTextPadding(options_.version);
  std::vector<std::vector<std::vector<int32_t>>> ids;
  for (const auto& caption : captions) ids.push_back(text::clipTokenChunks(tokenizer_, caption, padding, options_.maxTokenLength));
  return {{"clip", models::tokenChunksTensor(ids)}};
}

data::CaptionTokenizer SdFamily::captionTokenizer() const {
  return [this](const std::vector<std::string>& captions) { return tokenize(captions); };
}

torch::Tensor SdFamily::encode(const data::TokenIds& ids) {
  return models::encodeSdText(models_.textTransformer(), ids.at("clip").to(device_), textLayersToRun_);
}

torch::Tensor SdFamily::encodeLatents(const torch::Tensor& images, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  const torch::Dtype vaeDtype = models_.vae->quant_conv->weight.scalar_type();
  return models_.vae->encodeToLatents(images.to(vaeDtype), /*sample=*/true, generator);
}

void SdFamily::buildCaches(const data::Dataset& dataset, int workers) {
  step_->useLossMasks(dataset.hasLossMasks());
  const std::string family = options_.version == models::SdVersion::V1 ? "sd1" : "sd2";
  if (options_.cacheLatents) {
    const std::string vaeFile = options_.vae.empty() ? options_.checkpoint : options_.vae;
    const data::LatentCacheOptions o{options_.cacheLatentsToDisk,
                                     family + "-vae:" + fs::path(vaeFile).filename().string() + ":" + std::to_string(fs::file_size(vaeFile)),
                                     options_.vaeBatchSize, workers, models_.vae->config().downscale()};
    // On the device already (no staged start), and never captured (no compile panel).
    const LatentEncoder vae{"VAE", models_.vae.get(), [&](const torch::Tensor& images, at::Generator& g) { return encodeLatents(images, g); },
                            /*staged=*/false};
    latentCache_ = buildLatentCache(dataset, o, vae, device_, seed_, parking_);
  }
  if (options_.cacheText) {
    data::TextCacheOptions o;
    o.toDisk = options_.cacheTextToDisk;
    o.encoderIdentity = family + "-te:" + fs::path(options_.checkpoint).filename().string() + ":" +
                        std::to_string(options_.maxTokenLength) + ":clip_skip" + std::to_string(options_.clipSkip);
    textCache_ = buildTextCache(dataset, o, /*stage=*/nullptr, [&](const std::vector<std::string>& captions) {
      return std::map<std::string, torch::Tensor>{{"context", encodeCaptions(captions).to(torch::kCPU, torch::kFloat32)}};
    });
  }
  if (options_.cacheText) parking_.park("text encoder", models_.textEncoder());
}

UnetStepBatch SdFamily::stepInputs(const data::Batch& batch, bool staged, const at::Generator* latentGenerator) {
  UnetStepBatch in;
  in.latents = batch.latents.defined() ? batch.latents.to(device_)
                                       : encodeLatents(batch.images.to(device_), latentGenerator ? *latentGenerator : step_->generator());
  if (options_.cacheText) {
    in.context = batch.textOutputs.at("context").to(device_);
  } else if (staged) {
    // The text encoder runs inside the step's loss from these ids (stagedConditioning).
    const torch::Tensor ids = tokenIdsOf(batch).at("clip");
    in.conditioningInputs = {{"clip_ids", ids}};
    in.contextTokens = models::mergedContextLength(ids.size(1));
  } else {
    torch::NoGradGuard noGrad;
    in.context = encode(tokenIdsOf(batch));
  }
  in.lossWeights = batch.lossWeights.to(device_);
  if (batch.lossMasks.defined()) in.lossMask = lossMaskAt(batch.lossMasks.to(device_), in.latents.size(2), in.latents.size(3));
  in.microBatches = batch.microBatches;
  return in;
}

torch::Tensor SdFamily::loss(const data::Batch& batch, bool textEncodersTrain) {
  if (textEncodersTrain != textEncodersTrain_)
    throw std::logic_error("SdFamily::loss: the text encoder's training state differs from setTraining's");
  // The same staged conditioning as a captured step's: the encoder runs inside the step's loss.
  return step_->loss(stepInputs(batch, true));
}

std::vector<int64_t> SdFamily::validationTimesteps() const {
  return train::validationTimesteps(options_.step.noise.minTimestep.value_or(0),
                                    options_.step.noise.maxTimestep.value_or(step_->noiseSchedule().numTrainTimesteps()));
}

torch::Tensor SdFamily::validationLoss(const data::Batch& batch, int64_t timestep, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  models_.unet->eval();
  models_.textEncoder().eval();
  return step_->validationLoss(stepInputs(batch, false, &generator), timestep, generator);
}

StepShape SdFamily::stage(const data::Batch& batch) {
  torch::NoGradGuard noGrad;
  return step_->stage(stepInputs(batch, true));
}

StepShape SdFamily::stageWarmup(const data::ShapeSignature& signature) {
  const int64_t down = models_.vae->config().downscale();
  const StepShape shape{signature.batchSize, signature.height / down, signature.width / down, options_.maxTokenLength + 2,
                        signature.microBatches};
  step_->stageNeutral(shape);
  return shape;
}

}  // namespace sinter::train

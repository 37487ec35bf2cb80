#include "train/sdxl/sdxl_family.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "models/unet/sdxl_size_conditioning.h"
#include "models/text_encoders/sdxl_text_encoding.h"
#include "models/weights/served_weight.h"
#include "text/clip_token_chunks.h"
#include "train/base/caching_stage.h"
#include "train/base/config_values.h"
#include "train/base/device_info.h"
#include "train/capture/graphed_encoder.h"
#include "train/objectives/masked_loss.h"
#include "train/objectives/validation_timesteps.h"
#include "train/sdxl/sdxl_unet_regions.h"
#include "train/parts/cache_building.h"

namespace sinter::train {

namespace fs = std::filesystem;

SdxlFamilyOptions SdxlFamilyOptions::fromConfig(const Config& config, torch::Dtype computeDtype) {
  SdxlFamilyOptions o;
  o.checkpoint = config.getString("pretrained_model_name_or_path");
  o.vae = config.getString("vae");
  o.clipTokenizer = config.getString("clip_tokenizer");
  o.maxTokenLength = isUnset(config.get("max_token_length")) ? 75 : static_cast<int>(config.getInt("max_token_length"));
  o.checkpointOffload = config.getBool("cpu_offload_checkpointing");
  o.gradientCheckpointing = config.getBool("gradient_checkpointing") || o.checkpointOffload;
  o.placement = SdxlWeightPlacement::fromConfig(config);
  o.cacheLatentsToDisk = config.getBool("cache_latents_to_disk");
  o.cacheLatents = config.getBool("cache_latents") || o.cacheLatentsToDisk;
  o.cacheTextToDisk = config.getBool("cache_text_encoder_outputs_to_disk");
  o.cacheText = config.getBool("cache_text_encoder_outputs") || o.cacheTextToDisk;
  o.vaeBatchSize = static_cast<int>(config.getInt("vae_batch_size"));
  o.sampleSampler = config.getString("sample_sampler");
  o.step = UnetStepOptions::fromConfig(config, computeDtype);
  return o;
}

SdxlFamily::SdxlFamily(const RunContext& run)
    : options_(SdxlFamilyOptions::fromConfig(run.config, run.precision.weightDtype)),
      device_(run.device),
      captureVae_(run.compile.captureVae),
      captureTextEncoders_(run.compile.captureTextEncoders),
      captureLimit_(run.compile.cacheLimit),
      seed_(run.seed),
      parking_(run.device),
      tokenizer_(text::ClipTokenizer::fromPath(options_.clipTokenizer)) {
  spdlog::info("loading {}", options_.checkpoint);
  models_ = loadSdxlModelSet(options_.checkpoint, options_.vae);
  // Everything in the run's precision where it was loaded; nothing on the device yet (the start is
  // staged: see placeForTraining).
  models_.castInPlace(run.precision.weightDtype, run.precision.trainableModelDtype(), run.precision.vaeDtype(), options_.placement);
  if (options_.placement.fp8Unet)
    spdlog::info("{}: the U-Net's Linear and Conv2d weights stored as float8 e4m3, upcast per layer{}",
                 options_.placement.fp8TextEncoders ? "fp8_base" : "fp8_base_unet",
                 options_.placement.fp8TextEncoders ? "; the text encoders' Linear weights too" : "; the text encoders stay in the weight dtype");
  // Trained models are on the device before the method attaches (a full-weight run's float32
  // masters and optimizer state are made where its parameters are): a DreamBooth or fine-tune
  // run's U-Net, and its text encoders under train_text_encoder. A LoRA run's LoRA weights are made
  // on the device beside its frozen models, which wait in host memory until the caches are built.
  const bool fullWeights = trainsFullWeights(run.config.tab());
  unetAfterCaches_ = !fullWeights;
  encodersAfterCaches_ = !(fullWeights && run.config.getBool("train_text_encoder"));
  if (!unetAfterCaches_) placeUnet();
  if (!encodersAfterCaches_) placeTextEncoders();
  models_.unet->setFusedKernels(run.compile.fuseKernels);
  step_ = std::make_unique<UnetTrainStep>(models_.unet, options_.step, device_, run.noiseSeed());
  if (!options_.cacheText) step_->useStagedConditioning(stagedConditioning());
}

void SdxlFamily::placeUnet() {
  spdlog::info("placing the SDXL U-Net on {}", describeDevice(device_));
  models::moveToDevice(*models_.unet, device_);
}

void SdxlFamily::placeTextEncoders() {
  models::moveToDevice(*models_.clipL, device_);
  models::moveToDevice(*models_.bigG, device_);
}

FamilyFacts SdxlFamily::facts() const {
  FamilyFacts f;
  f.familyName = "sdxl";
  f.baseModelVersion = "sdxl_base_v1-0";
  f.modelSpecArchitecture = "stable-diffusion-xl-v1-base";
  f.modelSpecImplementation = "https://github.com/Stability-AI/generative-models";
  f.checkpointFile = fs::path(options_.checkpoint).filename().string();
  if (!options_.vae.empty()) f.vaeFile = fs::path(options_.vae).filename().string();
  return f;
}

std::vector<TrainableModel> SdxlFamily::trainableModels() {
  using network::LoraComponent;
  return {{"U-Net", false, models_.unet.get(), network::sdxlLoraRule(LoraComponent::Unet)},
          {"Text Encoder 1", true, models_.clipL.get(), network::sdxlLoraRule(LoraComponent::TextEncoder1)},
          {"Text Encoder 2", true, models_.bigG.get(), network::sdxlLoraRule(LoraComponent::TextEncoder2)}};
}

TextualInversionTargets sdxlEmbeddingTargets(text::ClipTokenizer& tokenizer, SdxlModelSet& models) {
  return {&tokenizer, {{"clip_l", models.clipL->textModel().get()}, {"clip_g", models.bigG->textModel().get()}}};
}

TextualInversionTargets SdxlFamily::textualInversionTargets() { return sdxlEmbeddingTargets(tokenizer_, models_); }

void SdxlFamily::captureRegions(GraphedRegions* regions) {
  if (regions) captureUnetBlocks(models_.unet, *regions);
  else releaseUnetBlocks(models_.unet);
}

void SdxlFamily::setTraining(bool textEncoders) {
  textEncodersTrain_ = textEncoders;
  models_.setTraining(textEncoders);
  // Set now that the method's adapters are attached: they decide whether the blocks draw random numbers.
  models_.unet->setGradientCheckpointing(options_.gradientCheckpointing, models::anyLoraDropout(*models_.unet));
  models_.unet->setCheckpointOffload(options_.checkpointOffload);
}

data::TokenIds SdxlFamily::tokenize(const std::vector<std::string>& captions) const {
  std::vector<std::vector<std::vector<int32_t>>> l, g;
  for (const auto& caption : captions) {
    text::SdxlTokenChunks chunks = text::sdxlTokenChunks(tokenizer_, caption, options_.maxTokenLength);
    l.push_back(std::move(chunks.clipL));
    g.push_back(std::move(chunks.bigG));
  }
  return {{"clip_l", models::tokenChunksTensor(l)}, {"big_g", models::tokenChunksTensor(g)}};
}

data::CaptionTokenizer SdxlFamily::captionTokenizer() const {
  return [this](const std::vector<std::string>& captions) { return tokenize(captions); };
}

models::SdxlTextConditioning SdxlFamily::encode(const data::TokenIds& ids) {
  return models::encodeSdxlText(models_.clipL, models_.bigG, ids.at("clip_l").to(device_), ids.at("big_g").to(device_));
}

StagedConditioning SdxlFamily::stagedConditioning() {
  StagedConditioning c;
  c.makeInputs = [this](const StepShape& shape) {
    const int64_t chunks = models::chunksOfContextLength(shape.tokens);
    const auto ids = torch::zeros({shape.batch, chunks, text::ClipTokenizer::kContextLength}, torch::kLong);
    const auto pairs = torch::zeros({shape.batch, 2}, torch::kLong);
    return StaticBuffers{{"clip_l_ids", ids}, {"big_g_ids", ids.clone()}, {"original_sizes_hw", pairs},
                         {"crop_top_lefts", pairs.clone()}, {"target_sizes_hw", pairs.clone()}};
  };
  c.encode = [this](const StaticBuffers& in) {
    std::optional<torch::NoGradGuard> noGrad;
    if (!textEncodersTrain_) noGrad.emplace();
    const models::SdxlTextConditioning t = encode({{"clip_l", in.at("clip_l_ids")}, {"big_g", in.at("big_g_ids")}});
    return UnetConditioning{t.context, models::sdxlAdmVector(t.pooled, in.at("original_sizes_hw"), in.at("crop_top_lefts"),
                                                             in.at("target_sizes_hw"))};
  };
  return c;
}

void SdxlFamily::buildCaches(const data::Dataset& dataset, int workers) {
  // The dataset says whether batches carry loss masks (alpha_mask, conditioning_data_dir).
  step_->useLossMasks(dataset.hasLossMasks());
  if (options_.cacheLatents) {
    const std::string vaeFile = options_.vae.empty() ? options_.checkpoint : options_.vae;
    const data::LatentCacheOptions o{options_.cacheLatentsToDisk,
                                     "sdxl-vae:" + fs::path(vaeFile).filename().string() + ":" + std::to_string(fs::file_size(vaeFile)),
                                     options_.vaeBatchSize, workers, models_.vae->config().downscale()};
    const LatentEncoder vae{"VAE", models_.vae.get(),
                            [&](const torch::Tensor& images, at::Generator& g) { return models_.encodeLatents(images, g); },
                            /*staged=*/true, captureVae_, captureLimit_};
    latentCache_ = buildLatentCache(dataset, o, vae, device_, seed_, parking_);
  }
  if (options_.cacheText) {
    data::TextCacheOptions o;
    o.toDisk = options_.cacheTextToDisk;
    o.encoderIdentity = "sdxl-te:" + fs::path(options_.checkpoint).filename().string() + ":" + std::to_string(options_.maxTokenLength);
    CachingStage encoderStage("CLIP-L and OpenCLIP bigG", {models_.clipL.get(), models_.bigG.get()}, device_);
    GraphedEncoder encode(
        "text encoders", device_,
        [&](const std::vector<torch::Tensor>& ids) {
          models::SdxlTextConditioning t = models::encodeSdxlText(models_.clipL, models_.bigG, ids[0], ids[1]);
          return std::vector<torch::Tensor>{t.context, t.pooled};
        },
        captureTextEncoders_, captureLimit_);
    textCache_ = buildTextCache(dataset, o, &encoderStage, [&](const std::vector<std::string>& captions) {
      const data::TokenIds ids = tokenize(captions);
      const std::vector<torch::Tensor> t = encode({ids.at("clip_l").to(device_), ids.at("big_g").to(device_)});
      return std::map<std::string, torch::Tensor>{{"context", t[0].to(torch::kCPU, torch::kFloat32)},
                                                  {"pooled", t[1].to(torch::kCPU, torch::kFloat32)}};
    });
    // The step reads the outputs: the encoders wait in host memory (cached text outputs mean the
    // encoders are frozen, core/validation.cpp).
    parking_.park("CLIP-L", *models_.clipL);
    parking_.park("OpenCLIP bigG", *models_.bigG);
  }
  placeForTraining();
}

void SdxlFamily::placeForTraining() {
  // What the step uses, after the caches: the models whose outputs are not cached, then the U-Net.
  if (!options_.cacheLatents) models::moveToDevice(*models_.vae, device_);
  if (!options_.cacheText && encodersAfterCaches_) placeTextEncoders();
  if (unetAfterCaches_) placeUnet();
}

UnetStepBatch SdxlFamily::stepInputs(const data::Batch& batch, bool staged, const at::Generator* latentGenerator) {
  UnetStepBatch in;
  {
    torch::NoGradGuard noGrad;
    in.latents = batch.latents.defined() ? batch.latents.to(device_) : models_.encodeLatents(batch.images.to(device_), latentGenerator ? *latentGenerator : step_->generator());
  }
  const torch::Tensor originalSizes = batch.originalSizesHW.to(device_), cropTopLefts = batch.cropTopLefts.to(device_),
                      targetSizes = batch.targetSizesHW.to(device_);
  if (options_.cacheText) {
    in.context = batch.textOutputs.at("context").to(device_);
    in.admVector = models::sdxlAdmVector(batch.textOutputs.at("pooled").to(device_), originalSizes, cropTopLefts, targetSizes);
  } else {
    const data::TokenIds ids = tokenIdsOf(batch);
    if (staged) {
      in.conditioningInputs = {{"clip_l_ids", ids.at("clip_l")}, {"big_g_ids", ids.at("big_g")},
                               {"original_sizes_hw", originalSizes}, {"crop_top_lefts", cropTopLefts},
                               {"target_sizes_hw", targetSizes}};
      in.contextTokens = models::mergedContextLength(ids.at("clip_l").size(1));
    } else {
      torch::NoGradGuard noGrad;
      const models::SdxlTextConditioning t = encode(ids);
      in.context = t.context;
      in.admVector = models::sdxlAdmVector(t.pooled, originalSizes, cropTopLefts, targetSizes);
    }
  }
  in.lossWeights = batch.lossWeights.to(device_);
  if (batch.lossMasks.defined())
    in.lossMask = lossMaskAt(batch.lossMasks.to(device_), in.latents.size(2), in.latents.size(3));
  in.microBatches = batch.microBatches;
  return in;
}

torch::Tensor SdxlFamily::loss(const data::Batch& batch, bool textEncodersTrain) {
  if (textEncodersTrain != textEncodersTrain_)
    throw std::logic_error("SdxlFamily::loss: the text encoders' training state differs from setTraining's");
  // The same staged conditioning as a captured step's: the encoders run inside the step's loss.
  return step_->loss(stepInputs(batch, true));
}

std::vector<int64_t> SdxlFamily::validationTimesteps() const {
  return train::validationTimesteps(options_.step.noise.minTimestep.value_or(0),
                                    options_.step.noise.maxTimestep.value_or(step_->noiseSchedule().numTrainTimesteps()));
}

torch::Tensor SdxlFamily::validationLoss(const data::Batch& batch, int64_t timestep, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  models_.unet->eval();  // LoRA dropout off, as sd-scripts' network.eval()
  models_.clipL->eval();
  models_.bigG->eval();
  return step_->validationLoss(stepInputs(batch, false, &generator), timestep, generator);
}

StepShape SdxlFamily::stage(const data::Batch& batch) {
  torch::NoGradGuard noGrad;
  return step_->stage(stepInputs(batch, true));
}

StepShape SdxlFamily::stageWarmup(const data::ShapeSignature& signature) {
  // The latents are the VAE's downscale smaller than the bucket (8 at full size); the context is
  // max_token_length tokens between one bos and one eos, as the chunks are merged (75 -> 77).
  const int64_t down = models_.vae->config().downscale();
  const StepShape shape{signature.batchSize, signature.height / down, signature.width / down,
                        models::mergedContextLength(options_.maxTokenLength / 75), signature.microBatches};
  step_->stageNeutral(shape);
  return shape;
}

std::vector<std::pair<std::string, torch::Tensor>> SdxlFamily::checkpointTensors() const {
  std::vector<std::pair<std::string, torch::Tensor>> out = models_.unet->checkpointTensors(models::SdxlUnetImpl::kPrefix);
  for (auto part : {models_.clipL->checkpointTensors(models::ClipTextModelImpl::kSdxlPrefix),
                    models_.bigG->checkpointTensors(models::OpenClipTextModelImpl::kSdxlPrefix),
                    models_.vae->checkpointTensors(models::SdxlVaeImpl::kPrefix)})
    out.insert(out.end(), part.begin(), part.end());
  return out;
}

}  // namespace sinter::train

#include "train/flux/flux_family.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/checkpoints/flux_checkpoint.h"
#include "models/flux/flux_latents.h"
#include "models/layers/linear.h"
#include "models/weights/served_weight.h"
#include "models/text_encoders/sdxl_text_encoding.h"
#include "network/lora_network.h"
#include "sample/sample_prompts.h"
#include "text/clip_token_chunks.h"
#include "train/base/caching_stage.h"
#include "train/base/config_values.h"
#include "train/base/device_info.h"
#include "train/capture/graphed_encoder.h"
#include "train/flux/flux_regions.h"
#include "train/loop/sample_images.h"
#include "train/objectives/masked_loss.h"
#include "train/objectives/validation_timesteps.h"
#include "train/parts/cache_building.h"

namespace sinter::train {

namespace fs = std::filesystem;

namespace {

// flux_train_network's update_metadata: these options, str()'d, and ss_model_type.
const std::vector<std::string> kFluxMetadataOptions = {
    "apply_t5_attn_mask", "weighting_scheme", "logit_mean", "logit_std", "mode_scale", "guidance_scale",
    "timestep_sampling", "sigmoid_scale", "model_prediction_type", "discrete_flow_shift"};

std::string fileIdentity(const std::string& path) {
  return fs::path(path).filename().string() + ":" + std::to_string(fs::file_size(path));
}

}  // namespace

bool fluxRunIsChroma(const Config& config) {
  if (config.getString("model_type") == "chroma") return true;
  const std::string transformer = config.getString("pretrained_model_name_or_path");
  if (transformer.empty() || !fs::is_regular_file(transformer)) return false;
  try {
    return models::detectFluxVariant(io::SafetensorsFile(transformer)) == models::FluxVariant::Chroma;
  } catch (const std::exception&) {
    return false;  // not a safetensors file: the run's loading says so
  }
}

bool fluxT5xxlTrains(const Config& config) {
  return config.tab() == Tab::LoRA && !config.getBool("network_train_unet_only") &&
         network::parseNetworkArgs(config.getList("network_args"), config.getString("network_module")).trainT5xxl;
}

FluxFamilyOptions FluxFamilyOptions::fromConfig(const Config& config, torch::Dtype computeDtype) {
  FluxFamilyOptions o;
  o.files.transformer = config.getString("pretrained_model_name_or_path");
  o.chroma = fluxRunIsChroma(config);
  o.files.ae = config.getString("ae");
  o.files.clipL = config.getString("clip_l");
  o.files.t5xxl = config.getString("t5xxl");
  o.clipTokenizer = config.getString("clip_tokenizer");
  o.t5Tokenizer = config.getString("t5_tokenizer");
  if (!isUnset(config.get("t5xxl_max_token_length"))) o.t5MaxTokens = static_cast<int>(config.getInt("t5xxl_max_token_length"));
  o.trainBlocks = network::parseNetworkArgs(config.getList("network_args"), config.getString("network_module")).trainBlocks.value_or("all");
  o.trainT5xxl = fluxT5xxlTrains(config);
  // sd-scripts turns gradient checkpointing on for cpu_offload_checkpointing.
  o.checkpointOffload = config.getBool("cpu_offload_checkpointing");
  o.gradientCheckpointing = config.getBool("gradient_checkpointing") || o.checkpointOffload;
  // fp8_base stores the transformer's frozen Linear weights in float8 and T5-XXL's too (sd-scripts'
  // fp8_base); fp8_base_unet the transformer's only (it turns fp8_base on for FLUX).
  o.placement = FluxWeightPlacement::fromConfig(config);
  o.cacheLatentsToDisk = config.getBool("cache_latents_to_disk");
  o.cacheLatents = config.getBool("cache_latents") || o.cacheLatentsToDisk;
  o.cacheTextToDisk = config.getBool("cache_text_encoder_outputs_to_disk");
  o.cacheText = config.getBool("cache_text_encoder_outputs") || o.cacheTextToDisk;
  o.clipLEncodesInStep = !o.chroma && o.cacheText && config.tab() == Tab::LoRA && !config.getBool("network_train_unet_only");
  o.vaeBatchSize = static_cast<int>(config.getInt("vae_batch_size"));
  if (o.cacheText && sampleScheduleFromConfig(config).any())
    for (const sample::SamplePrompt& p : sample::loadSamplePrompts(config.getString("sample_prompts")))
      for (const std::string& text : {p.prompt, p.negativePrompt}) o.sampleTexts.push_back(text);
  o.step.flow = FlowMatchingOptions::fromConfig(config);
  o.step.guidanceScale = config.getDouble("guidance_scale");
  o.step.applyT5AttnMask = config.getBool("apply_t5_attn_mask");
  o.step.computeDtype = computeDtype;
  if (!isUnset(config.get("min_timestep"))) o.minTimestep = config.getInt("min_timestep");
  if (!isUnset(config.get("max_timestep"))) o.maxTimestep = config.getInt("max_timestep");
  return o;
}

FluxFamily::FluxFamily(const RunContext& run)
    : options_(FluxFamilyOptions::fromConfig(run.config, run.precision.weightDtype)),
      device_(run.device),
      captureVae_(run.compile.captureVae),
      captureTextEncoders_(run.compile.captureTextEncoders),
      captureLimit_(run.compile.cacheLimit),
      seed_(run.seed),
      weightDtype_(run.precision.weightDtype),
      trainableDtype_(run.precision.trainableModelDtype()),
      parking_(run.device),
      clipTokenizer_(text::ClipTokenizer::fromPath(options_.clipTokenizer)),
      t5Tokenizer_(options_.t5Tokenizer) {
  if (options_.chroma)
    spdlog::info("loading {}, {}, {} (Chroma: no CLIP-L)", options_.files.transformer, options_.files.ae, options_.files.t5xxl);
  else
    spdlog::info("loading {}, {}, {}, {}", options_.files.transformer, options_.files.ae, options_.files.clipL, options_.files.t5xxl);
  models_ = loadFluxModelSet(options_.files);
  if (models_.transformer->config().chroma() != options_.chroma)
    throw models::CheckpointError("model_type = \"chroma\", but " + options_.files.transformer +
                                  " is a FLUX.1 transformer (no distilled_guidance_layer.*): give Chroma's file or model_type = \"flux\"");
  dev_ = models_.transformer->config().guidanceEmbed;
  // sd-scripts: 512 tokens for dev (and Chroma), 256 for schnell, unless t5xxl_max_token_length says otherwise.
  t5MaxTokens_ = options_.t5MaxTokens.value_or(dev_ ? 512 : 256);
  spdlog::info("{}: {} double and {} single blocks, T5 tokens {}",
               options_.chroma ? "Chroma" : dev_ ? "FLUX.1 dev" : "FLUX.1 schnell", models_.transformer->config().depth,
               models_.transformer->config().depthSingleBlocks, t5MaxTokens_);
  // Refused now rather than after the caches (the transformer may be placed only then).
  checkFluxPlacement(options_.placement, device_);
  // Everything in the run's precision where it was loaded; nothing on the device yet (buildCaches
  // stages them).
  models_.castInPlace(run.precision.weightDtype, options_.placement, run.precision.trainableModelDtype(), run.precision.vaeDtype());
  if (options_.placement.t5Float8)
    spdlog::info("fp8_base: T5-XXL's Linear weights stored as float8 e4m3, upcast per layer; its embeddings and layer norms in {} "
                 "(sd-scripts' fp8 T5-XXL; with fp8_base_unet T5-XXL stays in {})",
                 c10::toString(run.precision.weightDtype), c10::toString(run.precision.weightDtype));
  // A trained transformer (full weights) is on the device before the method attaches: its float32
  // masters and optimizer live where its parameters are. A LoRA run's frozen transformer waits in
  // host memory until the caches are built (buildCaches), as sd-scripts moves the DiT last.
  transformerAfterCaches_ = run.config.tab() == Tab::LoRA;
  if (!transformerAfterCaches_) placeTransformer();
  models_.transformer->setFusedKernels(run.compile.fuseKernels);
  step_ = std::make_unique<FluxTrainStep>(models_.transformer, options_.step, device_, run.noiseSeed());
  if (options_.textInStep()) step_->useStagedText(stagedText());
}

FluxStagedText FluxFamily::stagedText() {
  const bool t5InStep = !options_.cacheText, clipL = !options_.chroma;
  FluxStagedText t;
  t.makeInputs = [t5InStep, clipL](const StepShape& shape) {
    StaticBuffers b;
    if (clipL) b["clip_l_ids"] = torch::zeros({shape.batch, text::ClipTokenizer::kContextLength}, torch::kLong);
    if (t5InStep) b["t5_ids"] = torch::zeros({shape.batch, shape.tokens}, torch::kLong);
    return b;
  };
  t.encode = [this, t5InStep](const StaticBuffers& in) {
    FluxConditioning c;
    if (t5InStep) c.t5 = t5Hidden(in.at("t5_ids"), in.at("t5_mask"), textEncodersTrain_ && options_.trainT5xxl);
    c.pooled = options_.chroma ? noPooled(c.t5.size(0)) : clipLPooled(in.at("clip_l_ids"), textEncodersTrain_);
    return c;
  };
  return t;
}

void FluxFamily::placeTransformer() {
  spdlog::info("placing the FLUX transformer on {}", describeDevice(device_));
  placeFluxTransformer(*models_.transformer, device_, trainableDtype_, options_.placement);
  if (const FluxWeightPlacement& p = options_.placement; p.fp8Compute.fastForward)
    spdlog::info("fp8_fast: the transformer's Linear weights stored as float8 e4m3 with a scale per output channel; their "
                 "products on FP8 tensor cores (activations e4m3 scaled per token{}; fast accumulation {}), LoRA in {}",
                 p.fp8Compute.fastBackward ? ", input gradients e4m3 per token" : "; input gradients in the training precision",
                 p.fp8Compute.fastAccumulationBackward  ? "in both passes"
                 : p.fp8Compute.fastAccumulationForward ? "in the forward pass"
                                                         : "off",
                 c10::toString(weightDtype_));
  else if (p.fp8Scaled)
    spdlog::info("fp8_scaled: the transformer's Linear weights stored as float8 e4m3 with a per-tensor scale, dequantised per layer");
  else if (p.fp8Base)
    spdlog::info("fp8_base: the transformer's Linear weights stored as float8 e4m3, upcast per layer");
  if (const models::FluxTransformerImpl& t = *models_.transformer; !t.streamedBlocks().empty()) {
    const models::FluxBlockSwapSplit split = models::fluxBlockSwapSplit(t.config(), options_.placement.blocksToSwap);
    const int64_t ring = (t.doubleSwap() ? t.doubleSwap()->ringBytes() : 0) + (t.singleSwap() ? t.singleSwap()->ringBytes() : 0);
    const int64_t host = (t.doubleSwap() ? t.doubleSwap()->hostBytes() : 0) + (t.singleSwap() ? t.singleSwap()->hostBytes() : 0);
    spdlog::info("blocks_to_swap {}: {} double and {} single blocks swapped; the Linear weights of {} stream from host memory "
                 "({:.2f} GiB pinned) through a device ring of {:.2f} GiB",
                 options_.placement.blocksToSwap, split.doubles, split.singles, t.streamedBlocks(), host / 1073741824.0,
                 ring / 1073741824.0);
  }
}

FamilyFacts FluxFamily::facts() const {
  FamilyFacts f;
  f.familyName = "flux";
  // flux_utils.MODEL_VERSION_FLUX_V1 / MODEL_VERSION_CHROMA; sai_model_spec's ARCH_FLUX_1_CHROMA and IMPL_CHROMA.
  f.baseModelVersion = options_.chroma ? "chroma" : "flux1";
  f.checkpointFile = fs::path(options_.files.transformer).filename().string();
  f.modelSpecArchitecture = options_.chroma ? "chroma" : dev_ ? "flux-1-dev" : "flux-1-schnell";
  f.modelSpecImplementation = options_.chroma ? "https://huggingface.co/lodestones/Chroma" : "https://github.com/black-forest-labs/flux";
  f.modelSpecPredictionType = false;
  f.metadataOptionKeys = kFluxMetadataOptions;
  f.metadataValues = {{"ss_model_type", options_.chroma ? "chroma" : "flux"}};
  f.overlapGradientReduction = kFluxOverlapsGradientReduction;
  return f;
}

std::vector<TrainableModel> FluxFamily::trainableModels() {
  using network::LoraComponent;
  std::vector<TrainableModel> models{
      {"U-Net", false, models_.transformer.get(), network::fluxLoraRule(LoraComponent::Unet, options_.trainBlocks)}};
  // Chroma has no CLIP-L (sd-scripts' use_clip_l False): T5-XXL's modules alone, with train_t5xxl.
  if (models_.clipL) models.push_back({"Text Encoder 1", true, models_.clipL.get(), network::fluxLoraRule(LoraComponent::TextEncoder1)});
  if (options_.trainT5xxl) models.push_back({"T5-XXL", true, models_.t5.get(), network::fluxT5LoraRule()});
  return models;
}

void FluxFamily::captureRegions(GraphedRegions* regions) {
  if (regions) captureFluxBlocks(models_.transformer, *regions);
  else releaseFluxBlocks(models_.transformer);
}

void FluxFamily::setTraining(bool textEncoders) {
  textEncodersTrain_ = textEncoders;
  models_.setTraining(textEncoders, textEncoders && options_.trainT5xxl);
  if (models_.clipL) models_.clipL->textModel()->setGradientCheckpointing(textEncoders && options_.gradientCheckpointing);
  // Set now that the method's adapters are attached: they decide whether the blocks draw random numbers.
  models_.transformer->setGradientCheckpointing(options_.gradientCheckpointing, models::anyLoraDropout(*models_.transformer));
  models_.transformer->setCheckpointOffload(options_.checkpointOffload);
}

data::TokenIds FluxFamily::hostTokenIds(const std::vector<std::string>& captions) const {
  // CLIP-L: [bos] 75 tokens [eos], padded with eos to 77 (sd-scripts' max_length=77, truncation).
  const text::T5Tokens t5 = t5Tokenizer_.encode(captions, t5MaxTokens_);
  const auto shape = std::vector<int64_t>{t5.batch, t5.length};
  data::TokenIds ids{{"t5", torch::tensor(t5.ids, torch::kLong).reshape(shape)},
                     {"t5_mask", torch::tensor(t5.mask, torch::kLong).reshape(shape)}};
  if (options_.chroma) return ids;  // no CLIP-L
  std::vector<std::vector<std::vector<int32_t>>> clip;
  for (const auto& caption : captions)
    clip.push_back(text::clipTokenChunks(clipTokenizer_, caption, text::ClipPadding::EndOfText, 0));
  ids["clip_l"] = models::tokenChunksTensor(clip).select(1, 0);
  return ids;
}

FluxFamily::TokenIds FluxFamily::onDevice(const data::TokenIds& ids) const {
  const auto clip = ids.find("clip_l");
  return {clip == ids.end() ? torch::Tensor() : clip->second.to(device_), ids.at("t5").to(device_),
          ids.at("t5_mask").to(device_, torch::kFloat32)};
}

data::CaptionTokenizer FluxFamily::captionTokenizer() const {
  return [this](const std::vector<std::string>& captions) { return hostTokenIds(captions); };
}

torch::Tensor FluxFamily::noPooled(int64_t batch) const {
  return torch::zeros({batch, models_.transformer->config().vecInDim}, torch::TensorOptions().device(device_));
}

torch::Tensor FluxFamily::clipLPooled(const torch::Tensor& clipIds, bool withGrad) {
  std::optional<torch::NoGradGuard> noGrad;
  if (!withGrad) noGrad.emplace();
  return models_.clipL->pooledOutput(clipIds);
}

torch::Tensor FluxFamily::t5Hidden(const torch::Tensor& t5Ids, const torch::Tensor& t5Mask, bool withGrad) {
  std::optional<torch::NoGradGuard> noGrad;
  if (!withGrad) noGrad.emplace();
  // apply_t5_attn_mask masks padding in T5's own attention too (FluxTextEncodingStrategy).
  return models_.t5->forward(t5Ids, options_.step.applyT5AttnMask ? t5Mask : torch::Tensor());
}

FluxFamily::TextConditioning FluxFamily::encode(const TokenIds& ids, bool textEncodersTrain) {
  return {t5Hidden(ids.t5, ids.t5Mask, textEncodersTrain && options_.trainT5xxl), ids.t5Mask,
          options_.chroma ? noPooled(ids.t5.size(0)) : clipLPooled(ids.clipL, textEncodersTrain)};
}

void FluxFamily::buildCaches(const data::Dataset& dataset, int workers) {
  // The dataset says whether batches carry loss masks (alpha_mask, conditioning_data_dir).
  step_->useLossMasks(dataset.hasLossMasks());
  // The start in stages, as sd-scripts' (flux_train_network): each model on the device only while
  // it is needed, so the start's peak is its largest stage, not the sum of the models. A stage's
  // models move when the first thing is encoded (caches read whole from disk need none of them).
  if (options_.cacheLatents) {
    const data::LatentCacheOptions o{options_.cacheLatentsToDisk, "flux-ae:" + fileIdentity(options_.files.ae), options_.vaeBatchSize,
                                     workers, models_.ae->config().downscale()};
    const LatentEncoder ae{"AE", models_.ae.get(),
                           [&](const torch::Tensor& images, at::Generator& g) { return models_.encodeLatents(images, g); },
                           /*staged=*/true, captureVae_, captureLimit_};
    latentCache_ = buildLatentCache(dataset, o, ae, device_, seed_, parking_);
  }
  if (options_.cacheText) {
    data::TextCacheOptions o;
    o.toDisk = options_.cacheTextToDisk;
    // Outputs differ with the encoders, the token length and whether T5 masked its padding.
    o.encoderIdentity = "flux-te:" + (options_.chroma ? std::string("no-clip-l") : fileIdentity(options_.files.clipL)) + ":" +
                        fileIdentity(options_.files.t5xxl) + ":" + std::to_string(t5MaxTokens_) +
                        (options_.step.applyT5AttnMask ? ":masked" : "");
    CachingStage encoderStage(options_.chroma ? "T5-XXL" : "CLIP-L and T5-XXL",
                              options_.chroma ? std::vector<torch::nn::Module*>{models_.t5.get()}
                                              : std::vector<torch::nn::Module*>{models_.clipL.get(), models_.t5.get()},
                              device_);
    GraphedEncoder encodeText(
        "text encoders", device_,
        [&](const std::vector<torch::Tensor>& in) {
          const TextConditioning t = encode(TokenIds{in[0], in[1], in[2]}, false);
          return std::vector<torch::Tensor>{t.t5, t.pooled};
        },
        captureTextEncoders_, captureLimit_);
    textCache_ = buildTextCache(
        dataset, o, &encoderStage,
        [&](const std::vector<std::string>& captions) {
          const TokenIds ids = tokenize(captions);
          const std::vector<torch::Tensor> t = encodeText({ids.clipL, ids.t5, ids.t5Mask});
          return std::map<std::string, torch::Tensor>{{"t5", t[0].to(torch::kCPU, torch::kFloat32)},
                                                      {"t5_mask", ids.t5Mask.to(torch::kCPU)},
                                                      {"pooled", t[1].to(torch::kCPU, torch::kFloat32)}};
        },
        options_.clipLEncodesInStep ? "caching text encoder outputs: T5-XXL's are read from the cache, CLIP-L, whose LoRA modules "
                                      "train, encodes in each step (sd-scripts' partial cache)"
                                    : "caching text encoder outputs");
    // The sample prompts too, now that the encoders are here (sd-scripts' sample_prompts_te_outputs):
    // T5-XXL need not come back to the device beside the transformer for a sample.
    for (const std::string& text : options_.sampleTexts) {
      if (sampleText_.count(text)) continue;
      encoderStage.onDevice();
      const TextConditioning t = encode(tokenize({text}), false);
      sampleText_[text] = {t.t5.to(torch::kCPU), t.t5Mask.to(torch::kCPU), t.pooled.to(torch::kCPU)};
    }
    if (!sampleText_.empty()) spdlog::info("sample prompts: {} texts encoded for the samples", sampleText_.size());
    // The step reads the outputs: the frozen encoders wait in host memory.
    if (models_.clipL && !options_.clipLEncodesInStep) parking_.park("CLIP-L", *models_.clipL);
    parking_.park("T5-XXL", *models_.t5);
  }
  // Then what the step uses: the models whose outputs are not cached, and the transformer.
  if (!options_.cacheLatents) models::moveToDevice(*models_.ae, device_);
  if (models_.clipL && (!options_.cacheText || options_.clipLEncodesInStep)) models::moveToDevice(*models_.clipL, device_);
  if (!options_.cacheText) models::moveToDevice(*models_.t5, device_);
  if (transformerAfterCaches_) placeTransformer();
}

FluxStepBatch FluxFamily::stepInputs(const data::Batch& batch, bool staged, const at::Generator* latentGenerator) {
  FluxStepBatch in;
  torch::NoGradGuard noGrad;
  in.latents = batch.latents.defined() ? batch.latents.to(device_) : models_.encodeLatents(batch.images.to(device_), latentGenerator ? *latentGenerator : step_->generator());
  if (options_.cacheText) {
    in.t5 = batch.textOutputs.at("t5").to(device_);
    in.t5Mask = batch.textOutputs.at("t5_mask").to(device_);
    if (!options_.clipLEncodesInStep) in.pooled = batch.textOutputs.at("pooled").to(device_);
  }
  if (options_.textInStep() && staged) {
    const TokenIds ids = onDevice(tokenIdsOf(batch));
    if (ids.clipL.defined()) in.textInputs = {{"clip_l_ids", ids.clipL}};
    if (!options_.cacheText) {
      in.textInputs["t5_ids"] = ids.t5;
      in.t5Mask = ids.t5Mask;
      in.t5Tokens = ids.t5.size(1);
    }
  } else if (options_.clipLEncodesInStep) {
    in.pooled = clipLPooled(onDevice(tokenIdsOf(batch)).clipL, false);
  } else if (!options_.cacheText) {
    const TextConditioning t = encode(onDevice(tokenIdsOf(batch)), false);
    in.t5 = t.t5;
    in.t5Mask = t.t5Mask;
    in.pooled = t.pooled;
  }
  in.lossWeights = batch.lossWeights.to(device_);
  if (batch.lossMasks.defined())
    in.lossMask = lossMaskAt(batch.lossMasks.to(device_), in.latents.size(2), in.latents.size(3));
  in.microBatches = batch.microBatches;
  return in;
}

torch::Tensor FluxFamily::loss(const data::Batch& batch, bool textEncodersTrain) {
  if (textEncodersTrain != textEncodersTrain_)
    throw std::logic_error("FluxFamily::loss: the text encoders' training state differs from setTraining's");
  // The same staged inputs as a captured step's: the encoders run inside the step's loss.
  return step_->loss(stepInputs(batch, true));
}

std::vector<int64_t> FluxFamily::validationTimesteps() const {
  return train::validationTimesteps(options_.minTimestep.value_or(0), options_.maxTimestep.value_or(kFlowTrainTimesteps));
}

torch::Tensor FluxFamily::validationLoss(const data::Batch& batch, int64_t timestep, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  models_.transformer->eval();  // LoRA dropout off, as sd-scripts' network.eval()
  if (models_.clipL) models_.clipL->eval();
  models_.t5->eval();
  // Flow matching noises at sigma = timestep / 1000, the fixed timesteps' place on its schedule
  // (sd-scripts' FLUX sampling ignores the min/max_timestep its validation pass sets; Sinter holds
  // the timesteps fixed for FLUX as for SDXL, so every pass measures the same thing).
  return step_->validationLoss(stepInputs(batch, false, &generator), static_cast<double>(timestep) / kFlowTrainTimesteps, generator);
}

StepShape FluxFamily::stage(const data::Batch& batch) {
  torch::NoGradGuard noGrad;
  return step_->stage(stepInputs(batch, true));
}

StepShape FluxFamily::stageWarmup(const data::ShapeSignature& signature) {
  const int64_t down = models_.ae->config().downscale();
  const StepShape shape{signature.batchSize, signature.height / down, signature.width / down, t5MaxTokens_, signature.microBatches};
  step_->stageNeutral(shape);
  return shape;
}

std::vector<std::pair<std::string, torch::Tensor>> FluxFamily::checkpointTensors() const {
  return models_.transformer->checkpointTensors("");
}

std::vector<std::shared_ptr<models::BlockSwap>> FluxFamily::blockSwaps() const {
  std::vector<std::shared_ptr<models::BlockSwap>> out;
  for (const auto& swap : {models_.transformer->doubleSwap(), models_.transformer->singleSwap()})
    if (swap) out.push_back(swap);
  return out;
}

}  // namespace sinter::train

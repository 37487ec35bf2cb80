#include "train/sd3/sd3_family.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "data/dataset_settings.h"
#include "models/checkpoints/sd3_checkpoint.h"
#include "models/text_encoders/sdxl_text_encoding.h"
#include "models/weights/served_weight.h"
#include "network/lora_network.h"
#include "network/lora_targets.h"
#include "text/clip_token_chunks.h"
#include "train/base/caching_stage.h"
#include "train/base/config_values.h"
#include "train/base/mixed_precision.h"
#include "train/objectives/masked_loss.h"
#include "train/objectives/validation_timesteps.h"
#include "train/parts/cache_building.h"

namespace sinter::train {

namespace fs = std::filesystem;

namespace {

// sd3_train_network's update_metadata: these options, str()'d.
const std::vector<std::string> kSd3MetadataOptions = {"apply_lg_attn_mask", "apply_t5_attn_mask", "weighting_scheme",
                                                      "logit_mean",         "logit_std",          "mode_scale"};

// enable_scaled_pos_embed's training latent sizes: round(sqrt(width · height)) // 8 of each dataset's
// resolution, duplicates removed (sd3_train_network's load_target_model over get_resolutions()).
std::vector<int64_t> scaledPosEmbedLatentSizes(const Config& config) {
  std::vector<std::string> ignored;  // the run reports the dataset's warnings when it builds it
  std::set<int64_t> sizes;
  std::string listed;
  for (const data::DatasetSettings& d : data::datasetSettingsFromConfig(config, ignored)) {
    const data::Resolution r = d.buckets.resolution;
    sizes.insert(std::llround(std::sqrt(static_cast<double>(r.width) * static_cast<double>(r.height))) / 8);
    listed += (listed.empty() ? "" : ", ") + std::to_string(r.width) + "x" + std::to_string(r.height);
  }
  std::string sizeList;
  for (int64_t s : sizes) sizeList += (sizeList.empty() ? "" : ", ") + std::to_string(s);
  spdlog::info("scaled position embeddings for the resolutions {} (latent sizes {})", listed, sizeList);
  return {sizes.begin(), sizes.end()};
}

std::string sd3FileIdentity(const std::string& path) {
  return fs::path(path).filename().string() + ":" + std::to_string(fs::file_size(path));
}

}  // namespace

Sd3FamilyOptions Sd3FamilyOptions::fromConfig(const Config& config, torch::Dtype computeDtype) {
  Sd3FamilyOptions o;
  o.files.checkpoint = config.getString("pretrained_model_name_or_path");
  o.files.vae = config.getString("vae");
  o.files.clipL = config.getString("clip_l");
  o.files.clipG = config.getString("clip_g");
  o.files.t5xxl = config.getString("t5xxl");
  o.clipTokenizer = config.getString("clip_tokenizer");
  o.t5Tokenizer = config.getString("t5_tokenizer");
  if (!isUnset(config.get("t5xxl_max_token_length"))) o.t5MaxTokens = static_cast<int>(config.getInt("t5xxl_max_token_length"));
  o.applyT5AttnMask = config.getBool("apply_t5_attn_mask");
  o.applyLgAttnMask = config.getBool("apply_lg_attn_mask");
  o.clipLDropout = config.getDouble("clip_l_dropout_rate");
  o.clipGDropout = config.getDouble("clip_g_dropout_rate");
  o.t5Dropout = config.getDouble("t5_dropout_rate");
  // sd3_train_network: train_clip = not network_train_unet_only; T5-XXL with train_t5xxl=True.
  // sd3_train.py: with train_text_encoder, the CLIPs train unless both their rates are 0.
  if (config.tab() == Tab::LoRA) {
    o.trainClip = !config.getBool("network_train_unet_only");
  } else if (config.getBool("train_text_encoder")) {
    const double lr = config.getDouble("learning_rate");
    auto rate = [&](const char* key) { return isUnset(config.get(key)) ? lr : config.getDouble(key); };
    o.trainClip = rate("learning_rate_te1") != 0.0 || rate("learning_rate_te2") != 0.0;
    // sd3_train.py: T5-XXL with train_t5xxl, unless its rate is 0.
    o.trainT5xxl = config.getBool("train_t5xxl") && rate("learning_rate_te3") != 0.0;
  }
  if (config.tab() == Tab::LoRA) {
    const network::LoraNetworkArgs args = network::parseNetworkArgs(config.getList("network_args"), config.getString("network_module"));
    o.trainT5xxl = o.trainClip && args.trainT5xxl;
    o.embDims = args.sd3EmbDims;
  }
  o.checkpointOffload = config.getBool("cpu_offload_checkpointing");
  o.gradientCheckpointing = config.getBool("gradient_checkpointing") || o.checkpointOffload;
  o.cacheLatentsToDisk = config.getBool("cache_latents_to_disk");
  o.cacheLatents = config.getBool("cache_latents") || o.cacheLatentsToDisk;
  o.cacheTextToDisk = config.getBool("cache_text_encoder_outputs_to_disk");
  o.cacheText = config.getBool("cache_text_encoder_outputs") || o.cacheTextToDisk;
  o.vaeBatchSize = static_cast<int>(config.getInt("vae_batch_size"));
  o.step = Sd3StepOptions::fromConfig(config, computeDtype);
  return o;
}

Sd3Family::Sd3Family(const RunContext& run)
    : options_(Sd3FamilyOptions::fromConfig(run.config, run.precision.weightDtype)),
      device_(run.device),
      seed_(run.seed),
      parking_(run.device),
      clipTokenizer_(text::ClipTokenizer::fromPath(options_.clipTokenizer)),
      t5Tokenizer_(options_.t5Tokenizer) {
  spdlog::info("loading {}", options_.files.checkpoint);
  models_ = loadSd3ModelSet(options_.files);
  const models::Sd3MmditConfig& c = models_.mmdit->config();
  spdlog::info("SD 3 MMDiT ({}): {} joint blocks, {} wide{}, T5 tokens {}", c.modelType(), c.depth, c.hiddenSize(),
               c.xBlockSelfAttnLayers.empty() ? "" : ", MMDiT-X", options_.t5MaxTokens);
  if (run.config.getBool("enable_scaled_pos_embed")) models_.mmdit->enableScaledPosEmbed(scaledPosEmbedLatentSizes(run.config));
  // Each model in its dtype where it was loaded (the VAE in sd-scripts' vae_dtype). The start is
  // staged as sd3_train_network's (which moves the MMDiT and VAE to the CPU while the text encoders
  // cache): each model comes to the device when it is needed (buildCaches), so the start's peak is its
  // largest stage. A trained MMDiT (full weights) is on the device before the method attaches, where
  // its float32 masters and optimizer live; a LoRA run's frozen one comes after the caches.
  castFrozen(*models_.mmdit, run.precision.trainableModelDtype());
  for (torch::nn::Module* m : {static_cast<torch::nn::Module*>(models_.clipL.get()), static_cast<torch::nn::Module*>(models_.clipG.get()),
                               static_cast<torch::nn::Module*>(models_.t5.get())})
    castFrozen(*m, run.precision.weightDtype);
  castFrozen(*models_.vae, run.precision.vaeDtype());
  // fp8_base (sd3_train_network): the frozen MMDiT in float8 e4m3 (its Linear weights here, upcast per
  // call); T5-XXL stays as its file stores it, so float8 only from a float8 file and without
  // fp8_base_unet; the CLIPs never.
  const bool fp8Base = run.config.getBool("fp8_base") || run.config.getBool("fp8_base_unet");
  // blocks_to_swap (sd3_train_network's mmdit.enable_block_swap): the last blocks' Linear weights in
  // host memory, streamed through a ring of two (in float8 with fp8_base), before anything moves.
  if (const int64_t swapped = isUnset(run.config.get("blocks_to_swap")) ? 0 : run.config.getInt("blocks_to_swap"); swapped > 0) {
    const bool float8 = fp8Base && run.config.tab() == Tab::LoRA;
    models_.mmdit->enableBlockSwap(swapped, device_, float8 ? models::float8Dtype() : run.precision.trainableModelDtype());
    const models::BlockSwap& swap = *models_.mmdit->blockSwap();
    spdlog::info("blocks_to_swap {}: the Linear weights of {} stream from host memory ({:.2f} GiB{}) through a device ring of {:.2f} GiB",
                 swapped, models_.mmdit->streamedBlocks(), swap.hostBytes() / 1073741824.0, device_.is_cuda() ? " pinned" : "",
                 swap.ringBytes() / 1073741824.0);
  }
  if (fp8Base && run.config.tab() == Tab::LoRA) {
    spdlog::info("fp8_base: the MMDiT's {} Linear weights stored as float8 e4m3, upcast per layer", models::storeLinearsInFloat8(*models_.mmdit));
    if (!run.config.getBool("fp8_base_unet") && models_.t5StoredInFloat8)
      spdlog::info("fp8_base: T5-XXL's {} Linear weights kept in float8 e4m3, as {} stores them", models::storeLinearsInFloat8(*models_.t5),
                   models_.t5File);
  }
  mmditAfterCaches_ = run.config.tab() == Tab::LoRA;
  if (!mmditAfterCaches_) models::moveToDevice(*models_.mmdit, device_);
  step_ = std::make_unique<Sd3TrainStep>(models_.mmdit, options_.step, device_, run.noiseSeed());
}

std::vector<std::shared_ptr<models::BlockSwap>> Sd3Family::blockSwaps() const {
  if (const auto& swap = models_.mmdit->blockSwap()) return {swap};
  return {};
}

FamilyFacts Sd3Family::facts() const {
  const models::Sd3MmditConfig& c = models_.mmdit->config();
  FamilyFacts f;
  f.familyName = "sd3";
  f.baseModelVersion = c.modelType();  // train_network's model_version: load_target_model returns mmdit.model_type
  f.checkpointFile = fs::path(options_.files.checkpoint).filename().string();
  if (!options_.files.vae.empty()) f.vaeFile = fs::path(options_.files.vae).filename().string();
  f.modelSpecArchitecture = models::sd3ModelSpecArchitecture(c);
  f.modelSpecImplementation = "https://github.com/Stability-AI/generative-models";  // sai_model_spec's IMPL_STABILITY_AI
  f.modelSpecPredictionType = false;
  f.metadataOptionKeys = kSd3MetadataOptions;
  return f;
}

std::vector<TrainableModel> Sd3Family::trainableModels() {
  using network::LoraComponent;
  std::vector<TrainableModel> models{{"U-Net", false, models_.mmdit.get(), network::sd3LoraRule(LoraComponent::Unet, options_.embDims)},
                                     {"Text Encoder 1", true, models_.clipL.get(), network::sd3LoraRule(LoraComponent::TextEncoder1)},
                                     {"Text Encoder 2", true, models_.clipG.get(), network::sd3LoraRule(LoraComponent::TextEncoder2)}};
  if (options_.trainT5xxl) models.push_back({"T5-XXL", true, models_.t5.get(), network::sd3LoraRule(LoraComponent::TextEncoder3)});
  return models;
}

void Sd3Family::setTraining(bool textEncoders) {
  models_.mmdit->train();
  models_.vae->eval();
  models_.clipL->train(textEncoders && options_.trainClip);
  models_.clipG->train(textEncoders && options_.trainClip);
  models_.t5->train(textEncoders && options_.trainT5xxl);
  for (models::ClipTextModel* clip : {&models_.clipL, &models_.clipG})
    (*clip)->textModel()->setGradientCheckpointing(textEncoders && options_.gradientCheckpointing);
  // Set now that the method's adapters are attached: they decide whether the blocks draw random numbers.
  models_.mmdit->setGradientCheckpointing(options_.gradientCheckpointing, models::anyLoraDropout(*models_.mmdit),
                                          options_.checkpointOffload);
}

data::TokenIds Sd3Family::tokenize(const std::vector<std::string>& captions) const {
  // Sd3TokenizeStrategy: CLIP-L and CLIP-G 77 tokens each, truncated (CLIP-L padded with
  // <|endoftext|>, CLIP-G with 0), T5-XXL t5xxl_max_token_length tokens with its mask.
  std::vector<std::vector<std::vector<int32_t>>> clipL, clipG;
  for (const auto& caption : captions) {
    const text::SdxlTokenChunks chunks = text::sdxlTokenChunks(clipTokenizer_, caption, 0);
    clipL.push_back(chunks.clipL);
    clipG.push_back(chunks.bigG);
  }
  const text::T5Tokens t5 = t5Tokenizer_.encode(captions, options_.t5MaxTokens);
  const auto shape = std::vector<int64_t>{t5.batch, t5.length};
  return {{"clip_l", models::tokenChunksTensor(clipL).select(1, 0)},
          {"clip_g", models::tokenChunksTensor(clipG).select(1, 0)},
          {"t5", torch::tensor(t5.ids, torch::kLong).reshape(shape)},
          {"t5_mask", torch::tensor(t5.mask, torch::kLong).reshape(shape)}};
}

data::CaptionTokenizer Sd3Family::captionTokenizer() const {
  return [this](const std::vector<std::string>& captions) { return tokenize(captions); };
}

Sd3Family::ClipOutputs Sd3Family::encodeClips(const data::TokenIds& ids, bool withGrad) {
  std::optional<torch::NoGradGuard> noGrad;
  if (!withGrad) noGrad.emplace();
  // apply_lg_attn_mask: the tokenizers' attention masks passed to both CLIPs (their outputs are not masked after).
  const auto l = models_.clipL->projectedOutput(ids.at("clip_l").to(device_), options_.applyLgAttnMask);
  const auto g = models_.clipG->projectedOutput(ids.at("clip_g").to(device_), options_.applyLgAttnMask);
  return {torch::cat({l.penultimate, g.penultimate}, -1), torch::cat({l.textEmbeds, g.textEmbeds}, -1)};
}

torch::Tensor Sd3Family::encodeT5(const data::TokenIds& ids, bool withGrad) {
  std::optional<torch::NoGradGuard> noGrad;
  if (!withGrad) noGrad.emplace();
  // apply_t5_attn_mask masks the padding in T5-XXL's own attention (the MMDiT takes no mask).
  return models_.t5->forward(ids.at("t5").to(device_),
                             options_.applyT5AttnMask ? ids.at("t5_mask").to(device_, torch::kFloat32) : torch::Tensor());
}

torch::Tensor Sd3Family::context(const torch::Tensor& lgOut, const torch::Tensor& t5Out) const {
  const int64_t width = t5Out.size(-1);
  const torch::Tensor lg = torch::constant_pad_nd(lgOut.to(t5Out.scalar_type()), {0, width - lgOut.size(-1)});
  return torch::cat({lg, t5Out}, 1);
}

void Sd3Family::dropCaptions(ClipOutputs& clips, torch::Tensor& t5Out, const at::Generator& generator) const {
  const int64_t b = t5Out.size(0);
  // A sample's encoder is dropped when random.random() < its rate: its outputs are zeros.
  auto keep = [&](double rate) {
    return (at::rand({b}, generator, torch::TensorOptions().device(device_)) >= rate).to(torch::kFloat32);
  };
  if (options_.clipLDropout > 0.0 || options_.clipGDropout > 0.0) {
    const torch::Tensor keepL = keep(options_.clipLDropout), keepG = keep(options_.clipGDropout);
    const int64_t wL = models_.clipL->config().width, pL = models_.clipL->config().projectionDim;
    auto split = [&](const torch::Tensor& t, int64_t first) {
      std::vector<int64_t> shape(t.dim(), 1);
      shape[0] = b;
      return torch::cat({t.narrow(-1, 0, first) * keepL.view(shape).to(t.scalar_type()),
                         t.narrow(-1, first, t.size(-1) - first) * keepG.view(shape).to(t.scalar_type())},
                        -1);
    };
    clips.lgOut = split(clips.lgOut, wL);
    clips.lgPooled = split(clips.lgPooled, pL);
  }
  if (options_.t5Dropout > 0.0) t5Out = t5Out * keep(options_.t5Dropout).view({b, 1, 1}).to(t5Out.scalar_type());
}

void Sd3Family::buildCaches(const data::Dataset& dataset, int workers) {
  if (options_.cacheLatents) {
    const std::string vaeFile = options_.files.vae.empty() ? options_.files.checkpoint : options_.files.vae;
    const data::LatentCacheOptions o{options_.cacheLatentsToDisk, "sd3-vae:" + sd3FileIdentity(vaeFile), options_.vaeBatchSize, workers,
                                     models_.vae->config().downscale()};
    const LatentEncoder vae{"VAE", models_.vae.get(),
                            [&](const torch::Tensor& images, at::Generator& g) { return models_.encodeLatents(images, g); },
                            /*staged=*/true};
    latentCache_ = buildLatentCache(dataset, o, vae, device_, seed_, parking_);
  }
  if (options_.cacheText) {
    data::TextCacheOptions o;
    o.toDisk = options_.cacheTextToDisk;
    // Outputs differ with the encoders, the token length and whether T5 masked its padding; the
    // partial cache holds T5-XXL's alone.
    std::string identity = "sd3-te:" + sd3FileIdentity(models_.t5File) + ":" + std::to_string(options_.t5MaxTokens) +
                           (options_.applyT5AttnMask ? ":masked" : "");
    if (!options_.trainClip)
      identity += ":" + sd3FileIdentity(options_.files.clipL.empty() ? options_.files.checkpoint : options_.files.clipL) + ":" +
                  sd3FileIdentity(options_.files.clipG.empty() ? options_.files.checkpoint : options_.files.clipG) +
                  (options_.applyLgAttnMask ? ":lg-masked" : "");
    o.encoderIdentity = identity;
    CachingStage encoders(options_.trainClip ? "T5-XXL" : "CLIP-L, CLIP-G and T5-XXL",
                          options_.trainClip ? std::vector<torch::nn::Module*>{models_.t5.get()}
                                             : std::vector<torch::nn::Module*>{models_.clipL.get(), models_.clipG.get(), models_.t5.get()},
                          device_);
    textCache_ = buildTextCache(
        dataset, o, &encoders,
        [&](const std::vector<std::string>& captions) {
          const data::TokenIds ids = tokenize(captions);
          std::map<std::string, torch::Tensor> out{{"t5_out", encodeT5(ids, false).to(torch::kCPU, torch::kFloat32)}};
          if (!options_.trainClip) {
            const ClipOutputs clips = encodeClips(ids, false);
            out["lg_out"] = clips.lgOut.to(torch::kCPU, torch::kFloat32);
            out["lg_pooled"] = clips.lgPooled.to(torch::kCPU, torch::kFloat32);
          }
          return out;
        },
        options_.trainClip ? "caching text encoder outputs: T5-XXL's are read from the cache, CLIP-L and CLIP-G, which train (their "
                             "LoRA modules or their weights), encode in each step (sd-scripts' partial cache)"
                           : "caching text encoder outputs");
    // The step reads the outputs: the frozen encoders wait in host memory.
    parking_.park("T5-XXL", *models_.t5);
    if (!options_.trainClip) {
      parking_.park("CLIP-L", *models_.clipL);
      parking_.park("CLIP-G", *models_.clipG);
    }
  }
  // Then what the step uses: the models whose outputs are not cached, and the MMDiT.
  if (!options_.cacheLatents) models::moveToDevice(*models_.vae, device_);
  if (options_.clipsEncodeInStep()) {
    models::moveToDevice(*models_.clipL, device_);
    models::moveToDevice(*models_.clipG, device_);
  }
  if (!options_.cacheText) models::moveToDevice(*models_.t5, device_);
  if (mmditAfterCaches_) models::moveToDevice(*models_.mmdit, device_);
}

Sd3StepBatch Sd3Family::stepInputs(const data::Batch& batch, bool textEncodersTrain, const at::Generator* generator, bool dropout) {
  const at::Generator& g = generator ? *generator : step_->generator();
  Sd3StepBatch in;
  {
    torch::NoGradGuard noGrad;
    in.latents = batch.latents.defined() ? batch.latents.to(device_) : models_.encodeLatents(batch.images.to(device_), g);
  }
  const bool cachedClips = !options_.clipsEncodeInStep();
  const data::TokenIds ids = cachedClips ? data::TokenIds{} : tokenIdsOf(batch);  // everything cached: no tokens needed
  ClipOutputs clips = cachedClips ? ClipOutputs{batch.textOutputs.at("lg_out").to(device_), batch.textOutputs.at("lg_pooled").to(device_)}
                                  : encodeClips(ids, textEncodersTrain && options_.trainClip);
  torch::Tensor t5Out = options_.cacheText ? batch.textOutputs.at("t5_out").to(device_)
                                           : encodeT5(ids, textEncodersTrain && options_.trainT5xxl);
  if (dropout) dropCaptions(clips, t5Out, g);
  in.context = context(clips.lgOut, t5Out);
  in.pooled = clips.lgPooled;
  in.lossWeights = batch.lossWeights.to(device_);
  if (batch.lossMasks.defined()) in.lossMask = lossMaskAt(batch.lossMasks.to(device_), in.latents.size(2), in.latents.size(3));
  in.microBatches = batch.microBatches;
  return in;
}

torch::Tensor Sd3Family::loss(const data::Batch& batch, bool textEncodersTrain) {
  return step_->loss(stepInputs(batch, textEncodersTrain));
}

StepShape Sd3Family::stage(const data::Batch&) {
  throw std::logic_error("SD 3.x trains eagerly (no compile panel): its batches are not staged");
}

torch::Tensor Sd3Family::stagedLoss(const StepShape&) {
  throw std::logic_error("SD 3.x trains eagerly (no compile panel): it has no staged loss");
}

StepShape Sd3Family::stageWarmup(const data::ShapeSignature&) {
  throw std::logic_error("SD 3.x trains eagerly (no compile panel): nothing is captured ahead");
}

std::string Sd3Family::microBatchJoinRefusal() const {
  if (!options_.cacheLatents) return kLatentsEncodedInStep;
  // Both drawn once per batch from the noise's generator, outside the draws a joined pass makes
  // per micro-batch (the caption dropout before them, the crop for the whole batch).
  if (options_.clipLDropout > 0.0 || options_.clipGDropout > 0.0 || options_.t5Dropout > 0.0)
    return "clip_l/clip_g/t5_dropout_rate draw before the noise, in the step's inputs";
  if (options_.step.posEmbRandomCropRate > 0.0) return "pos_emb_random_crop_rate crops the position table once for a whole batch";
  return "";
}

std::vector<int64_t> Sd3Family::validationTimesteps() const {
  return train::validationTimesteps(options_.step.minTimestep, options_.step.maxTimestep);
}

torch::Tensor Sd3Family::validationLoss(const data::Batch& batch, int64_t timestep, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  models_.mmdit->eval();  // LoRA dropout off, as sd-scripts' network.eval()
  models_.clipL->eval();
  models_.clipG->eval();
  models_.t5->eval();
  return step_->validationLoss(stepInputs(batch, false, &generator, /*dropout=*/false),
                               static_cast<double>(timestep) / kFlowTrainTimesteps, generator);
}

std::vector<std::pair<std::string, torch::Tensor>> Sd3Family::checkpointTensors() const {
  // As SAI's _incl_clips files: the MMDiT, the VAE and both CLIPs in one file; T5-XXL stays its own
  // file unless it trained (train_t5xxl), then it is in this one too, as the _incl_clips_t5xxl releases.
  std::vector<std::pair<std::string, torch::Tensor>> out = models_.mmdit->checkpointTensors(models::kSd3MmditPrefix);
  for (auto& t : models_.vae->checkpointTensors(models::kSd3VaePrefix)) out.push_back(std::move(t));
  for (auto& t : models_.clipL->checkpointTensors(models::kSd3ClipLPrefix)) out.push_back(std::move(t));
  for (auto& t : models_.clipG->checkpointTensors(models::kSd3ClipGPrefix)) out.push_back(std::move(t));
  if (options_.trainT5xxl)
    for (auto& [key, tensor] : models_.t5->checkpointTensors()) out.emplace_back(models::kSd3T5xxlPrefix + key, std::move(tensor));
  return out;
}

}  // namespace sinter::train

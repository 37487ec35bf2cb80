#include "train/sdxl_lora_trainer.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <unistd.h>

#include "core/registry.h"
#include "data/batch_loader.h"
#include "data/batch_plan.h"
#include "data/dataset.h"
#include "data/dataset_settings.h"
#include "data/latent_cache.h"
#include "data/text_cache.h"
#include "models/sdxl_size_conditioning.h"
#include "models/sdxl_text_encoding.h"
#include "network/lora_file.h"
#include "network/lora_metadata.h"
#include "network/lora_network.h"
#include "text/clip_token_chunks.h"
#include "text/clip_tokenizer.h"
#include "train/adamw.h"
#include "train/device_info.h"
#include "train/lr_schedule.h"
#include "train/mixed_precision.h"
#include "train/optimizer_args.h"
#include "train/progress_meter.h"
#include "train/run_errors.h"
#include "train/save_schedule.h"
#include "train/sdxl_model_set.h"
#include "train/sdxl_train_step.h"
#include "train/stop_request.h"
#include "train/train_state.h"

namespace sinter::train {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::optional<double> optionalDouble(const Config& c, const char* key) {
  Value v = c.get(key);
  if (isUnset(v)) return std::nullopt;
  return asDouble(v);
}

// sd-scripts options by key for the metadata; keys Sinter has no option for (v2, ...) are None.
nlohmann::ordered_json optionAsJson(const Config& c, const std::string& key) {
  if (!findOption(key)) return nullptr;
  Value v = c.get(key);
  if (isUnset(v)) return nullptr;
  if (auto b = std::get_if<bool>(&v)) return *b;
  if (auto i = std::get_if<long long>(&v)) return *i;
  if (auto d = std::get_if<double>(&v)) return *d;
  if (auto s = std::get_if<std::string>(&v)) return *s;
  return asList(v);
}

// output_dir must exist (it is created) and be writable before anything is trained.
void prepareOutputDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError("output_dir '" + dir + "' cannot be created: " + ec.message());
  const fs::path probe = fs::path(dir) / (".sinter-write-test-" + std::to_string(::getpid()));
  FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) throw InputError("output_dir '" + dir + "' is not writable");
  std::fclose(f);
  fs::remove(probe, ec);
}

// Text conditioning straight from captions (when it is not cached).
class CaptionEncoder {
 public:
  CaptionEncoder(SdxlModelSet& models, text::ClipTokenizer tokenizer, int maxTokenLength, torch::Device device)
      : models_(models), tokenizer_(std::move(tokenizer)), maxTokenLength_(maxTokenLength), device_(device) {}

  models::SdxlTextConditioning encode(const std::vector<std::string>& captions) {
    std::vector<std::vector<std::vector<int32_t>>> l, g;
    for (const auto& caption : captions) {
      text::SdxlTokenChunks chunks = text::sdxlTokenChunks(tokenizer_, caption, maxTokenLength_);
      l.push_back(std::move(chunks.clipL));
      g.push_back(std::move(chunks.bigG));
    }
    return models::encodeSdxlText(models_.clipL, models_.bigG, models::tokenChunksTensor(l).to(device_),
                                  models::tokenChunksTensor(g).to(device_));
  }

 private:
  SdxlModelSet& models_;
  text::ClipTokenizer tokenizer_;
  int maxTokenLength_;
  torch::Device device_;
};

}  // namespace

int trainSdxlLora(const Config& config, data::Dataset dataset, EventSink& events, bool& trainingStarted) {
  const auto setupStart = Clock::now();
  installStopHandlers();  // a stop during setup (caching can take long) ends the run cleanly too
  const torch::Device device = trainingDevice();
  const std::uint64_t seed = isUnset(config.get("seed")) ? std::random_device{}() : static_cast<std::uint64_t>(config.getInt("seed"));
  torch::manual_seed(seed);
  spdlog::info("device: {}, seed: {}", describeDevice(device), seed);
  if (std::string flags = applyCudaMathFlags(device, config.getBool("cuda_allow_tf32"), config.getBool("cuda_cudnn_benchmark"));
      !flags.empty())
    spdlog::info("{}", flags);

  const PrecisionPlan precision =
      planPrecision(parseMixedPrecision(config.getString("mixed_precision")), config.getBool("full_fp16"), config.getBool("full_bf16"));

  const std::string outputDir = config.getString("output_dir");
  prepareOutputDir(outputDir);
  const std::string name = outputName(config);

  // Models.
  const std::string checkpoint = config.getString("pretrained_model_name_or_path");
  spdlog::info("loading {}", checkpoint);
  SdxlModelSet models = loadSdxlModelSet(checkpoint, config.getString("vae"));
  models.toDevice(device, precision.weightDtype);
  models.unet->setGradientCheckpointing(config.getBool("gradient_checkpointing"));

  text::ClipTokenizer tokenizer = text::ClipTokenizer::fromPath(config.getString("clip_tokenizer"));
  const int maxTokenLength = isUnset(config.get("max_token_length")) ? 75 : static_cast<int>(config.getInt("max_token_length"));

  // Data (discovered by the preflight).
  const int workers = std::max(1, static_cast<int>(config.getInt("max_data_loader_n_workers")));
  data::BatchPlan plan(dataset, seed);
  const int gradAccum = static_cast<int>(config.getInt("gradient_accumulation_steps"));
  std::optional<long long> maxEpochs;
  if (!isUnset(config.get("max_train_epochs"))) maxEpochs = config.getInt("max_train_epochs");
  const data::TrainingLength length =
      data::computeTrainingLength(plan.batchesPerEpoch(), maxEpochs, config.getInt("max_train_steps"), gradAccum);

  // LoRA network.
  network::LoraNetworkOptions loraOptions;
  loraOptions.dim = isUnset(config.get("network_dim")) ? 4 : config.getInt("network_dim");
  loraOptions.alpha = config.getDouble("network_alpha");
  loraOptions.dropout = optionalDouble(config, "network_dropout").value_or(0.0);
  loraOptions.dtype = precision.loraDtype;
  loraOptions.device = device;
  loraOptions.args = network::parseNetworkArgs(config.getList("network_args"));
  const std::string weightsFile = config.getString("network_weights");
  std::map<std::string, torch::Tensor> initialWeights;
  if (!weightsFile.empty()) {
    initialWeights = network::readLoraTensors(weightsFile);
    if (config.getBool("dim_from_weights")) loraOptions.moduleRanks = network::readLoraModuleRanks(initialWeights);
  }
  network::LoraNetwork lora(loraOptions);
  const bool trainUnet = !config.getBool("network_train_text_encoder_only");
  const bool trainTextEncoders = !config.getBool("network_train_unet_only");
  if (trainUnet) lora.attach(network::LoraComponent::Unet, *models.unet);
  if (trainTextEncoders) {
    lora.attach(network::LoraComponent::TextEncoder1, *models.clipL);
    lora.attach(network::LoraComponent::TextEncoder2, *models.bigG);
  }
  if (!initialWeights.empty()) {
    network::LoraLoadReport r = lora.loadStateDict(initialWeights, weightsFile);
    spdlog::info("network_weights: {} modules loaded from {}", r.loadedModules, weightsFile);
    for (const auto& w : r.warnings) spdlog::warn("{}", w);
  }
  spdlog::info("LoRA: {} U-Net modules, {} text encoder modules, {} parameters, rank {}, alpha {}",
               lora.moduleCount(network::LoraComponent::Unet),
               lora.moduleCount(network::LoraComponent::TextEncoder1) + lora.moduleCount(network::LoraComponent::TextEncoder2),
               lora.parameterCount(), loraOptions.dim, loraOptions.alpha);

  // Caches (the encoders are frozen and run without gradients).
  const bool cacheLatents = config.getBool("cache_latents") || config.getBool("cache_latents_to_disk");
  std::optional<data::LatentCache> latentCache;
  if (cacheLatents) {
    data::LatentCacheOptions o;
    o.toDisk = config.getBool("cache_latents_to_disk");
    o.encoderIdentity = "sdxl-vae:" + fs::path(config.getString("vae").empty() ? checkpoint : config.getString("vae")).filename().string() +
                        ":" + std::to_string(fs::file_size(config.getString("vae").empty() ? checkpoint : config.getString("vae")));
    o.batchSize = static_cast<int>(config.getInt("vae_batch_size"));
    o.workers = workers;
    data::LatentCacheStats stats;
    spdlog::info("caching latents");
    at::Generator cacheGenerator = makeGenerator(device, seed);
    latentCache = data::LatentCache::build(
        dataset,
        [&](const torch::Tensor& images) {
          return models.encodeLatents(images.to(device), cacheGenerator).to(torch::kCPU, torch::kFloat32);
        },
        o, &stats);
    spdlog::info("latents: {} encoded, {} read from disk", stats.encoded, stats.loadedFromDisk);
  }
  CaptionEncoder captions(models, tokenizer, maxTokenLength, device);
  const bool cacheText = config.getBool("cache_text_encoder_outputs") || config.getBool("cache_text_encoder_outputs_to_disk");
  std::optional<data::TextCache> textCache;
  if (cacheText) {
    data::TextCacheOptions o;
    o.toDisk = config.getBool("cache_text_encoder_outputs_to_disk");
    o.encoderIdentity = "sdxl-te:" + fs::path(checkpoint).filename().string() + ":" + std::to_string(maxTokenLength);
    data::TextCacheStats stats;
    spdlog::info("caching text encoder outputs");
    textCache = data::TextCache::build(
        dataset,
        [&](const std::vector<std::string>& caps) {
          torch::NoGradGuard noGrad;
          models::SdxlTextConditioning t = captions.encode(caps);
          return std::map<std::string, torch::Tensor>{{"context", t.context.to(torch::kCPU, torch::kFloat32)},
                                                      {"pooled", t.pooled.to(torch::kCPU, torch::kFloat32)}};
        },
        o, &stats);
    spdlog::info("text encoder outputs: {} encoded, {} read from disk", stats.encoded, stats.loadedFromDisk);
  }

  // Optimizer and schedule.
  train::resolveOptimizerType(config.getString("optimizer_type"));
  ParsedOptimizerArgs optArgs = parseAdamWArgs(config.getList("optimizer_args"));
  const double learningRate = config.getDouble("learning_rate");
  std::vector<network::LoraParamGroup> loraGroups =
      lora.parameterGroups(optionalDouble(config, "text_encoder_lr"), optionalDouble(config, "unet_lr"), learningRate);
  std::vector<OptimizerGroup> groups;
  for (auto& g : loraGroups) groups.push_back(OptimizerGroup{g.label, g.lr, g.params});
  if (groups.empty()) throw InputError("nothing to train: every LoRA parameter group has a learning rate of 0");
  AdamW optimizer(groups, optArgs.hyper);
  LrScheduleOptions lrOptions;
  lrOptions.type = parseLrSchedulerType(config.getString("lr_scheduler"));
  lrOptions.totalSteps = length.maxTrainSteps;
  lrOptions.warmupSteps = resolveWarmupSteps(config.getDouble("lr_warmup_steps"), length.maxTrainSteps);
  lrOptions.numCycles = config.getInt("lr_scheduler_num_cycles");
  lrOptions.power = config.getDouble("lr_scheduler_power");
  lrOptions.initialLr = learningRate;
  LrSchedule schedule(lrOptions);

  SdxlStepOptions stepOptions;
  stepOptions.noise.noiseOffset = optionalDouble(config, "noise_offset").value_or(0.0);
  stepOptions.noise.ipNoiseGamma = optionalDouble(config, "ip_noise_gamma").value_or(0.0);
  if (!isUnset(config.get("min_timestep"))) stepOptions.noise.minTimestep = config.getInt("min_timestep");
  if (!isUnset(config.get("max_timestep"))) stepOptions.noise.maxTimestep = config.getInt("max_timestep");
  stepOptions.loss.lossType = parseLossType(config.getString("loss_type"));
  stepOptions.loss.huberC = config.getDouble("huber_c");
  stepOptions.loss.vPrediction = config.getBool("v_parameterization");
  stepOptions.loss.minSnrGamma = optionalDouble(config, "min_snr_gamma");
  stepOptions.maxGradNorm = config.getDouble("max_grad_norm");
  stepOptions.computeDtype = precision.weightDtype;
  stepOptions.lossScaling = precision.lossScaling;
  SdxlTrainStep trainStep(models.unet, stepOptions, device, seed);

  // Metadata written into every LoRA file.
  network::LoraRunFacts facts;
  facts.sessionId = std::to_string(std::random_device{}());
  facts.trainingStartedAt = unixNow();
  facts.numTrainImages = dataset.numTrainImages;
  facts.numRegImages = dataset.numRegImages;
  facts.numBatchesPerEpoch = plan.batchesPerEpoch();
  facts.numEpochs = length.numEpochs;
  facts.maxTrainSteps = length.maxTrainSteps;
  facts.textEncoderLr = optionAsJson(config, "text_encoder_lr");
  facts.optimizerArgs = optArgs.pythonText;
  facts.networkArgs = loraOptions.args.raw;
  facts.sdModelName = fs::path(checkpoint).filename().string();
  if (!config.getString("vae").empty()) facts.vaeName = fs::path(config.getString("vae")).filename().string();
  facts.userDatasetConfig = !config.getString("dataset_config").empty();
  if (!dataset.datasets.empty()) {
    const auto& b = dataset.datasets.front().buckets;
    facts.resolution = std::make_pair(b.resolution.width, b.resolution.height);
    facts.batchSizePerDevice = dataset.datasets.front().batchSize;
    facts.totalBatchSize = facts.batchSizePerDevice * gradAccum;
    facts.enableBucket = b.enableBucket;
    facts.bucketNoUpscale = b.bucketNoUpscale;
    facts.minBucketReso = b.minBucketReso;
    facts.maxBucketReso = b.maxBucketReso;
  }
  const network::OptionLookup lookup = [&](const std::string& key) { return optionAsJson(config, key); };
  const network::Metadata ssMetadata = network::buildSsMetadata(lookup, facts);
  const torch::Dtype saveDtype = config.getString("save_precision").empty()
                                     ? precision.loraDtype
                                     : network::savePrecisionDtype(config.getString("save_precision"));

  // Resume: network, optimizer, RNG and data position continue exactly.
  long long globalStep = 0;
  data::DataOrderState position{seed, 0, 0};
  const std::string resumeFolder = config.getString("resume");
  if (!resumeFolder.empty()) {
    TrainState state = loadTrainState(resumeFolder);
    std::map<std::string, torch::Tensor> net(state.network.begin(), state.network.end());
    network::LoraLoadReport r = lora.loadStateDict(net, resumeFolder);
    if (!r.missing.empty())
      throw InputError("resume: the state in '" + resumeFolder + "' lacks " + std::to_string(r.missing.size()) +
                       " of this network's modules (e.g. " + r.missing.front() + "); was it saved with other network settings?");
    optimizer.loadStateTensors(std::map<std::string, torch::Tensor>(state.optimizer.begin(), state.optimizer.end()));
    setGeneratorState(trainStep.generator(), requireTensor(state.rng, "device", resumeFolder));
    globalStep = state.progress.value("global_step", 0LL);
    const auto& d = state.progress.at("data");
    position = data::DataOrderState{d.at("seed").get<std::uint64_t>(), d.at("epoch").get<long long>(), d.at("index").get<long long>()};
    if (position.seed != seed) spdlog::warn("resume: the data order continues with the saved seed {}", position.seed);
    spdlog::info("resumed from {} at step {}", resumeFolder, globalStep);
  }
  data::LoaderOptions loaderOptions;
  loaderOptions.workers = static_cast<int>(config.getInt("max_data_loader_n_workers"));
  loaderOptions.maxTrainSteps = length.maxTrainSteps;
  loaderOptions.gradientAccumulationSteps = gradAccum;
  data::BatchPlan resumedPlan(dataset, position.seed);
  data::BatchLoader loader(dataset, resumedPlan, loaderOptions, latentCache ? &*latentCache : nullptr,
                           textCache ? &*textCache : nullptr);
  loader.seek(position);

  // sd-scripts' summary, then the start event.
  spdlog::info("running training");
  spdlog::info("  num train images * repeats: {}", dataset.numTrainImages);
  spdlog::info("  num reg images: {}", dataset.numRegImages);
  spdlog::info("  num batches per epoch: {}", plan.batchesPerEpoch());
  spdlog::info("  num epochs: {}", length.numEpochs);
  spdlog::info("  batch size per device: {}", facts.batchSizePerDevice);
  spdlog::info("  gradient accumulation steps: {}", gradAccum);
  spdlog::info("  total optimization steps: {}", length.maxTrainSteps);
  spdlog::info("setup took {:.1f} s", seconds(setupStart));
  events.emit(events::Start{SINTER_VERSION, describeDevice(device), "sdxl", "lora", length.maxTrainSteps, length.numEpochs});

  // Saving.
  const SaveSchedule saves = SaveSchedule::fromConfig(config);
  auto saveLora = [&](const std::string& stem, const std::string& kind, long long epoch) {
    network::Metadata ss = ssMetadata;
    network::stampSave(ss, unixNow(), globalStep, epoch);
    network::Metadata spec = network::buildModelSpec(lookup, facts, unixNow());
    const std::string path = (fs::path(outputDir) / (stem + ".safetensors")).string();
    network::saveLoraFile(lora, path, saveDtype, network::metadataForSave(ss, spec, config.getBool("no_metadata")));
    spdlog::info("saved {}", path);
    events.emit(events::Saved{path, kind});
  };
  auto saveState = [&](const std::string& folderName) {
    TrainState state;
    state.network = lora.stateDict(torch::kFloat32);
    state.optimizer = optimizer.stateTensors();
    state.rng = {{"device", generatorState(trainStep.generator())}};
    const data::DataOrderState p = loader.state();
    state.progress = {{"global_step", globalStep}, {"data", {{"seed", p.seed}, {"epoch", p.epoch}, {"index", p.indexInEpoch}}}};
    const std::string path = (fs::path(outputDir) / folderName).string();
    saveTrainState(path, state);
    spdlog::info("saved state {}", path);
    events.emit(events::Saved{path, "state"});
  };
  auto removeSave = [&](const std::string& stem, const std::string& stateFolder) {
    std::error_code ec;
    fs::remove(fs::path(outputDir) / (stem + ".safetensors"), ec);
    fs::remove_all(fs::path(outputDir) / stateFolder, ec);
  };

  // Training.
  trainingStarted = true;
  if (stopRequested()) {
    spdlog::info("stopped before the first step as requested; nothing was trained");
    events.emit(events::Done{"stopped", globalStep, 0.0});
    return 0;
  }
  models.setTraining(trainTextEncoders);
  ProgressMeter meter(length.maxTrainSteps, std::max(1LL, length.stepsPerEpoch));
  const bool progressLine = ::isatty(2) && !events.jsonl();
  const auto trainStart = Clock::now();
  double warmupSeconds = 0;
  bool stopped = false;
  while (globalStep < length.maxTrainSteps) {
    const auto stepStart = Clock::now();
    torch::Tensor lossSum;
    int micro = 0;
    bool epochEnds = false;
    long long epoch = 0;
    std::string signature;
    do {
      data::Batch batch = loader.next();
      epoch = batch.epoch;
      signature = std::to_string(batch.lossWeights.size(0)) + "x" + data::toString(batch.bucket);
      SdxlStepBatch in;
      {
        torch::NoGradGuard noGrad;
        in.latents = batch.latents.defined() ? batch.latents.to(device)
                                             : models.encodeLatents(batch.images.to(device), trainStep.generator());
      }
      torch::Tensor pooled;
      if (cacheText) {
        in.context = batch.textOutputs.at("context").to(device);
        pooled = batch.textOutputs.at("pooled").to(device);
      } else {
        std::optional<torch::NoGradGuard> noGrad;
        if (!trainTextEncoders) noGrad.emplace();
        models::SdxlTextConditioning t = captions.encode(batch.captions);
        in.context = t.context;
        pooled = t.pooled;
      }
      in.admVector = models::sdxlAdmVector(pooled, batch.originalSizesHW.to(device), batch.cropTopLefts.to(device),
                                           batch.targetSizesHW.to(device));
      in.lossWeights = batch.lossWeights.to(device);
      torch::Tensor loss = trainStep.forwardBackward(in, gradAccum);
      lossSum = lossSum.defined() ? lossSum + loss : loss;
      ++micro;
      epochEnds = batch.indexInEpoch + 1 == plan.batchesPerEpoch();
    } while (micro < gradAccum && !epochEnds);
    const double lr = optimizer.group(0).lr * schedule.factor(globalStep);
    trainStep.optimizerStep(optimizer, schedule);
    ++globalStep;

    // Read back only now, outside the step.
    const double loss = (lossSum / micro).item<double>();
    if (!std::isfinite(loss)) throw std::runtime_error("the loss is " + std::to_string(loss) + " at step " + std::to_string(globalStep));
    const double stepSeconds = seconds(stepStart);
    // The first step allocates buffers and picks kernels: report it apart from training speed.
    const bool warmup = globalStep == 1 && resumeFolder.empty();
    if (warmup) {
      warmupSeconds = stepSeconds;
      events.emit(events::Warmup{signature, warmupSeconds});
      spdlog::info("warm-up (first step, {}): {:.2f} s", signature, warmupSeconds);
    }
    meter.record(loss, warmup ? std::nullopt : std::optional<double>(stepSeconds));
    events::Step s;
    s.step = globalStep, s.total = length.maxTrainSteps, s.epoch = epoch + 1, s.loss = loss, s.avg_loss = meter.averageLoss();
    s.lr = lr, s.it_per_s = meter.itPerSecond(), s.eta_s = meter.etaSeconds(globalStep), s.step_ms = stepSeconds * 1000.0;
    s.peak_mem_mb = peakMemoryMb(device);
    events.emit(s);
    if (progressLine) std::fprintf(stderr, "\r%s", meter.line(globalStep).c_str());
    else if (globalStep % 10 == 0 || globalStep == length.maxTrainSteps) spdlog::info("{}", meter.line(globalStep));

    if (saves.saveAfterStep(globalStep, length.maxTrainSteps)) {
      saveLora(stepFileStem(name, globalStep), "step", epoch + 1);
      if (saves.saveState) saveState(stepStateFolderName(name, globalStep));
      if (auto old = saves.stepToRemove(globalStep)) removeSave(stepFileStem(name, *old), stepStateFolderName(name, *old));
    }
    if (epochEnds) {
      const long long done = epoch + 1;
      events.emit(events::Epoch{done, length.numEpochs, globalStep, meter.averageLoss()});
      if (progressLine) std::fprintf(stderr, "\n");
      spdlog::info("epoch {}/{} done", done, length.numEpochs);
      if (saves.saveAfterEpoch(done, length.numEpochs) && globalStep < length.maxTrainSteps) {
        saveLora(epochFileStem(name, done), "epoch", done);
        if (saves.saveState) saveState(epochStateFolderName(name, done));
        if (auto old = saves.epochToRemove(done)) removeSave(epochFileStem(name, *old), epochStateFolderName(name, *old));
      }
    }
    if (stopRequested() && globalStep < length.maxTrainSteps) {
      if (progressLine) std::fprintf(stderr, "\n");
      spdlog::info("stopping at step {} as requested", globalStep);
      saveLora(stepFileStem(name, globalStep), "stopped", epoch + 1);
      saveState(stepStateFolderName(name, globalStep));
      stopped = true;
      break;
    }
  }
  if (progressLine) std::fprintf(stderr, "\n");
  if (!stopped) {
    saveLora(name, "final", length.numEpochs);
    if (saves.saveState || saves.saveStateOnTrainEnd) saveState(lastStateFolderName(name));
    spdlog::info("model saved: {}", (fs::path(outputDir) / (name + ".safetensors")).string());
  }
  const double trainSeconds = seconds(trainStart);
  events.emit(events::Done{stopped ? "stopped" : "completed", globalStep, trainSeconds});
  spdlog::info("{} after {} steps in {:.1f} s (warm-up {:.1f} s)", stopped ? "stopped" : "completed", globalStep, trainSeconds,
               warmupSeconds);
  return 0;
}

}  // namespace sinter::train

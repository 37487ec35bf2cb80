#include "train/methods/lora_method.h"

#include <spdlog/spdlog.h>

#include <random>

#include "core/network_rank.h"
#include "core/registry.h"
#include "io/safetensors.h"
#include "network/lora_file.h"
#include "train/base/config_values.h"
#include "train/base/run_errors.h"
#include "train/methods/base_model_facts.h"
#include "train/optim/optimizer_args.h"
#include "train/optim/optimizer_choice.h"

namespace sinter::train {

// sd-scripts options by key for the metadata; keys Sinter has no option for (v2, ...) are None.
nlohmann::ordered_json configOptionAsJson(const Config& c, const std::string& key) {
  if (!findOption(key)) return nullptr;
  Value v = c.get(key);
  if (isUnset(v)) return nullptr;
  if (auto b = std::get_if<bool>(&v)) return *b;
  if (auto i = std::get_if<long long>(&v)) return *i;
  if (auto d = std::get_if<double>(&v)) return *d;
  if (auto s = std::get_if<std::string>(&v)) return *s;
  return asList(v);
}

network::LoraNetworkOptions loraNetworkOptions(const Config& config) {
  network::LoraNetworkOptions o;
  o.dim = networkDim(config);
  o.alpha = config.getDouble("network_alpha");
  o.dropout = optionalDouble(config, "network_dropout").value_or(0.0);
  o.args = network::parseNetworkArgs(config.getList("network_args"), config.getString("network_module"));
  return o;
}

LoraMethodOptions LoraMethodOptions::fromConfig(const Config& config) {
  LoraMethodOptions o;
  o.network = loraNetworkOptions(config);
  o.trainUnet = !config.getBool("network_train_text_encoder_only");
  o.trainTextEncoders = !config.getBool("network_train_unet_only");
  o.weightsFile = config.getString("network_weights");
  o.dimFromWeights = config.getBool("dim_from_weights");
  o.partialWeights = config.getBool("network_weights_partial");
  o.textEncoderLr = optionalDouble(config, "text_encoder_lr");
  o.unetLr = optionalDouble(config, "unet_lr");
  o.t5xxlLr = optionalDouble(config, "t5xxl_lr");
  o.sd3T5xxlLr = optionalDouble(config, "sd3_t5xxl_lr");
  o.learningRate = config.getDouble("learning_rate");
  const OptimizerSettings optimizer = optimizerSettingsFromConfig(config);
  o.optimizerArgsText = optimizer.pythonText;
  o.optimizerClass = optimizer.className();
  if (!config.getString("save_precision").empty()) o.savePrecision = config.getString("save_precision");
  o.noMetadata = config.getBool("no_metadata");
  o.scaleWeightNorms = optionalDouble(config, "scale_weight_norms");
  if (o.scaleWeightNorms && *o.scaleWeightNorms == 0.0) o.scaleWeightNorms.reset();  // sd-scripts: 0 is off
  return o;
}

std::unique_ptr<ComputeCopies> loraComputeCopies(network::LoraNetwork& network, torch::Dtype computeDtype) {
  // LyCORIS adapters cast their tensors in their own forward (models/adapters/lycoris_adapter.cpp).
  if (network.modules().empty() || network.options().dtype == computeDtype || network.options().args.lycoris) return nullptr;
  std::vector<torch::Tensor> masters;
  for (const network::LoraModule& m : network.modules()) {
    masters.push_back(m.adapter->down);
    masters.push_back(m.adapter->up);
  }
  auto copies = std::make_unique<ComputeCopies>(masters, computeDtype);
  for (size_t i = 0; i < network.modules().size(); ++i) {
    network.modules()[i].adapter->downCompute = copies->copyOf(2 * i);
    network.modules()[i].adapter->upCompute = copies->copyOf(2 * i + 1);
  }
  return copies;
}

LoraMethod::LoraMethod(const RunContext& run)
    : config_(run.config), options_(LoraMethodOptions::fromConfig(run.config)), computeDtype_(run.precision.weightDtype) {
  options_.network.dtype = run.precision.loraDtype;
  options_.network.device = run.device;
  saveDtype_ = options_.savePrecision ? network::savePrecisionDtype(*options_.savePrecision) : run.precision.loraDtype;
  if (std::vector<data::PivotalEmbeddingSpec> specs = data::pivotalEmbeddingSpecs(run.config); !specs.empty())
    embeddings_ = std::make_unique<PivotalEmbeddings>(run, std::move(specs));
}

void LoraMethod::attach(FamilyPart& family) {
  std::map<std::string, torch::Tensor> initialWeights;
  if (!options_.weightsFile.empty()) {
    initialWeights = network::readLoraTensors(options_.weightsFile);
    if (options_.dimFromWeights) options_.network.moduleRanks = network::readLoraModuleRanks(initialWeights);
  }
  network_ = std::make_unique<network::LoraNetwork>(options_.network);
  size_t unetModules = 0, textEncoderModules = 0;
  for (const TrainableModel& model : family.trainableModels()) {
    if (model.textEncoder ? !options_.trainTextEncoders : !options_.trainUnet) continue;
    (model.textEncoder ? textEncoderModules : unetModules) += network_->attach(model.loraRule, *model.module);
  }
  // Pivotal tuning: its embeddings start from the rows network_weights' file bundles for their
  // tokens (★ beyond sd-scripts, whose non-strict load_weights passes bundle_emb over); those keys
  // are theirs, not the network's.
  if (embeddings_)
    for (const std::string& key : embeddings_->attach(family, options_.weightsFile)) initialWeights.erase(key);
  if (!options_.weightsFile.empty()) {
    network::LoraLoadReport r = network_->loadStateDict(initialWeights, options_.weightsFile);
    const std::vector<std::string> matchWarnings =
        network::checkWeightsMatch(r, network_->modules().size(), options_.weightsFile, options_.partialWeights);
    spdlog::info("network_weights: {} modules loaded from {}", r.loadedModules, options_.weightsFile);
    for (const auto& w : r.warnings) spdlog::warn("{}", w);
    for (const auto& w : matchWarnings) spdlog::warn("{}", w);
  }
  if (const auto& lycoris = options_.network.args.lycoris) {
    spdlog::info("LyCORIS {}: {} U-Net modules, {} text encoder modules, {} parameters, dim {}, alpha {}",
                 models::lycorisAlgoName(lycoris->algo), unetModules, textEncoderModules, network_->parameterCount(),
                 options_.network.dim, options_.network.alpha);
    for (const std::string& key : lycoris->unread)
      spdlog::warn("network_args {}: lycoris.kohya's create_network does not read it, so it changes nothing", key);
  } else {
    spdlog::info("LoRA: {} U-Net modules, {} text encoder modules, {} parameters, rank {}, alpha {}", unetModules,
                 textEncoderModules, network_->parameterCount(), options_.network.dim, options_.network.alpha);
  }
  copies_ = loraComputeCopies(*network_, computeDtype_);
  if (options_.scaleWeightNorms) maxNorm_ = std::make_unique<network::LoraMaxNorm>(*network_, *options_.scaleWeightNorms);

  const FamilyFacts familyFacts = family.facts();
  facts_.sessionId = std::to_string(std::random_device{}());
  facts_.trainingStartedAt = network::unixTimeNow();
  facts_.textEncoderLr = configOptionAsJson(config_, "text_encoder_lr");
  // sd-scripts writes the list it was given: [CLIP-L's, T5-XXL's] (SD 3: [CLIP-L's, CLIP-G's, T5-XXL's]) where a later value differs.
  const bool second = options_.t5xxlLr && network_->readsTextEncoderLrAt(1);
  const bool third = options_.sd3T5xxlLr && network_->readsTextEncoderLrAt(2);
  if ((second || third) && facts_.textEncoderLr.is_number()) {
    const nlohmann::ordered_json first = facts_.textEncoderLr;
    facts_.textEncoderLr = nlohmann::ordered_json::array({first, options_.t5xxlLr ? nlohmann::ordered_json(*options_.t5xxlLr) : first});
    if (third) facts_.textEncoderLr.push_back(*options_.sd3T5xxlLr);
  }
  facts_.optimizerArgs = options_.optimizerArgsText;
  facts_.optimizerName = options_.optimizerClass;
  facts_.networkArgs = options_.network.args.raw;
  recordBaseModelFacts(familyFacts, facts_);
  if (!familyFacts.vaeFile.empty()) facts_.vaeName = familyFacts.vaeFile;
  facts_.familyOptionKeys = familyFacts.metadataOptionKeys;
  facts_.familyValues = familyFacts.metadataValues;
}

std::vector<OptimizerGroup> loraOptimizerGroups(const std::vector<network::LoraParamGroup>& groups) {
  std::vector<OptimizerGroup> out;
  for (const auto& g : groups) out.push_back(OptimizerGroup{g.label, g.lr, g.params});
  return out;
}

StepDerivedWeights lycorisStepDerivedWeights(network::LycorisStepDeltas& deltas) {
  network::LycorisStepDeltas* d = &deltas;
  return {[d] { d->backpropagate(); }, [d] { d->refresh(); }, [d] { return d->mutableTensors(); }};
}

std::vector<OptimizerGroup> LoraMethod::parameterGroups() const {
  std::vector<OptimizerGroup> groups =
      loraOptimizerGroups(network_->parameterGroups(options_.textEncoderLr, options_.unetLr, options_.learningRate, options_.t5xxlLr, options_.sd3T5xxlLr));
  if (embeddings_)  // their own groups, after the network's (one optimizer for both)
    for (OptimizerGroup& g : embeddings_->parameterGroups()) groups.push_back(std::move(g));
  if (groups.empty()) throw InputError("nothing to train: every LoRA parameter group has a learning rate of 0");
  return groups;
}

void LoraMethod::describeRun(const data::Dataset& dataset, long long batchesPerEpoch, long long numEpochs, long long maxTrainSteps,
                             int gradientAccumulationSteps) {
  facts_.numTrainImages = dataset.numTrainImages;
  facts_.numRegImages = dataset.numRegImages;
  facts_.numValidationImages = dataset.numValidationImages;
  facts_.numBatchesPerEpoch = batchesPerEpoch;
  facts_.numEpochs = numEpochs;
  facts_.maxTrainSteps = maxTrainSteps;
  facts_.userDatasetConfig = !config_.getString("dataset_config").empty();
  if (!dataset.datasets.empty()) {
    const auto& b = dataset.datasets.front().buckets;
    facts_.resolution = std::make_pair(b.resolution.width, b.resolution.height);
    facts_.batchSizePerDevice = dataset.datasets.front().batchSize;
    facts_.totalBatchSize = facts_.batchSizePerDevice * gradientAccumulationSteps;
    facts_.enableBucket = b.enableBucket;
    facts_.bucketNoUpscale = b.bucketNoUpscale;
    facts_.minBucketReso = b.minBucketReso;
    facts_.maxBucketReso = b.maxBucketReso;
  }
  ssMetadata_ = network::buildSsMetadata([&](const std::string& key) { return configOptionAsJson(config_, key); }, facts_);
}

void LoraMethod::saveModel(const std::string& path, const SaveStamp& stamp) {
  const network::OptionLookup lookup = [&](const std::string& key) { return configOptionAsJson(config_, key); };
  network::Metadata ss = ssMetadata_;
  network::stampSave(ss, network::unixTimeNow(), stamp.step, stamp.epoch);
  for (const auto& [key, value] : stamp.sinterMetadata()) ss[key] = value;
  network::Metadata spec = network::buildModelSpec(lookup, facts_, network::unixTimeNow());
  const network::Metadata metadata = network::metadataForSave(ss, spec, options_.noMetadata);
  if (!embeddings_) {
    network::saveLoraFile(*network_, path, saveDtype_, metadata);
    return;
  }
  // Pivotal tuning: the embeddings inside the file (bundle_emb.*, which sd-scripts' non-strict
  // load_weights and create_network_from_weights pass over) and each apart beside it.
  std::vector<std::pair<std::string, torch::Tensor>> tensors = network_->stateDict(saveDtype_);
  for (auto& t : embeddings_->bundleTensors(saveDtype_)) tensors.push_back(std::move(t));
  io::writeSafetensors(path, tensors, metadata);
  embeddings_->saveApart(path, saveDtype_, facts_);
}

std::function<void()> LoraMethod::afterOptimizerStep() {
  if (!maxNorm_) return {};
  return [this] { maxNorm_->apply(); };
}

std::vector<std::string> LoraMethod::stepFigureNames() const {
  if (!maxNorm_) return {};
  return {"max_norm/keys_scaled", "norm/avg_key_norm", "max_norm/max_key_norm"};
}

NamedTensors LoraMethod::stateTensors() const {
  NamedTensors out = network_->resumeTensors();
  if (embeddings_)
    for (auto& t : embeddings_->stateTensors()) out.push_back(std::move(t));
  return out;
}

std::vector<std::string> LoraMethod::filesBeside(const std::string& modelPath) const {
  return embeddings_ ? embeddings_->filePathsApart(modelPath) : std::vector<std::string>{};
}

std::vector<data::CaptionReplacement> LoraMethod::samplePromptReplacements() const {
  return embeddings_ ? embeddings_->promptReplacements() : std::vector<data::CaptionReplacement>{};
}

void LoraMethod::loadStateTensors(const NamedTensors& tensors, const std::string& source) {
  if (embeddings_) embeddings_->loadStateTensors(tensors, source);
  std::map<std::string, torch::Tensor> byName;
  for (const auto& [name, t] : tensors)
    if (name.rfind("pivotal_embeddings/", 0) != 0) byName.emplace(name, t);
  network::LoraLoadReport r = network_->loadResumeTensors(byName, source);
  if (!r.missing.empty())
    throw InputError("resume: the state in '" + source + "' lacks " + std::to_string(r.missing.size()) +
                     " of this network's modules (e.g. " + r.missing.front() + "); was it saved with other network settings?");
  if (stepDeltas_) stepDeltas_->refresh();  // the step deltas of the loaded tensors
}

void LoraMethod::trainedWeightsChanged() {
  // LyCORIS's step deltas are read by training forward passes only, which rebuild them after each
  // update: samples and files read the tensors themselves.
  if (copies_) copies_->refresh();
}

std::optional<StepDerivedWeights> LoraMethod::derivePerStep() {
  if (!options_.network.args.lycoris) return std::nullopt;
  auto deltas = std::make_unique<network::LycorisStepDeltas>(*network_, computeDtype_);
  if (deltas->size() == 0) return std::nullopt;
  const double mib = static_cast<double>(deltas->deltaElements()) * 2.0 * static_cast<double>(torch::elementSize(computeDtype_)) / 1048576.0;
  // Under gradient checkpointing the forward keeps no delta between micro-batches; a step delta
  // (and its gradient) would be memory the run chose not to spend.
  if (config_.getBool("gradient_checkpointing")) {
    spdlog::info("LyCORIS: {} deltas rebuilt in every forward pass (gradient_checkpointing: building them once per step would "
                 "keep {:.0f} MiB)", deltas->size(), mib);
    return std::nullopt;
  }
  stepDeltas_ = std::move(deltas);
  stepDeltas_->start();
  spdlog::info("LyCORIS: {} deltas built once per step, not per micro-batch ({:.0f} MiB with their gradients)", stepDeltas_->size(), mib);
  return lycorisStepDerivedWeights(*stepDeltas_);
}

}  // namespace sinter::train

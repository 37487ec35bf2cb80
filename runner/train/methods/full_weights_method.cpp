#include "train/methods/full_weights_method.h"

#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "core/option.h"
#include "io/safetensors.h"
#include "network/lora_file.h"
#include "train/base/config_values.h"
#include "train/base/mixed_precision.h"
#include "train/base/run_errors.h"
#include "train/methods/base_model_facts.h"
#include "train/methods/block_learning_rates.h"
#include "train/methods/lora_method.h"
#include "train/optim/fused_backward.h"
#include "train/parts/family_registration.h"

namespace sinter::train {

std::optional<Refusal> fullWeightsRefusal(const Config& config) {
  const std::string mixed = config.getString("mixed_precision");
  // The run's own precision rule (the config's values have parsed by now).
  const bool float32Masters =
      planPrecision(parseMixedPrecision(mixed), config.getBool("full_fp16"), config.getBool("full_bf16"), /*fullWeights=*/true).float32Masters;
  if (float32Masters && fusedBackwardPassRequested(config))
    return Refusal{"fused_backward_pass", "fused_backward_pass with mixed_precision = \"" + mixed + "\" and fp32 master weights is not "
           "built: set full_" + mixed + " = true (sd-scripts' low-memory recipe), or fused_backward_pass = false"};
  for (const char* key : {"fp8_base", "fp8_base_unet"})
    if (config.getBool(key))
      return Refusal{key, std::string(key) + " stores frozen weights; a DreamBooth or fine-tune run trains them: turn " + key + " off"};
  if (!isUnset(config.get("blocks_to_swap")) && config.getInt("blocks_to_swap") > 0 && !fusedBackwardPassRequested(config))
    return Refusal{"blocks_to_swap", "blocks_to_swap: a swapped block's weights are trained inside the backward pass, while the block "
                                     "is on the device (as flux_train.py's block swap needs): set fused_backward_pass = true with "
                                     "optimizer_type = \"Adafactor\", or blocks_to_swap = 0"};
  if (config.getBool("train_text_encoder") && config.family())
    if (const FamilyRegistration* family = findRegisteredFamily(*config.family()); family && !family->fullWeightsTextEncoderRefusal.empty())
      return Refusal{"train_text_encoder", "train_text_encoder: " + family->fullWeightsTextEncoderRefusal};
  return std::nullopt;
}

FullWeightsMethod::FullWeightsMethod(const RunContext& run)
    : config_(run.config),
      trainTextEncoders_(run.config.getBool("train_text_encoder")),
      float32Masters_(run.precision.float32Masters),
      computeDtype_(run.precision.weightDtype) {
  if (const auto why = fullWeightsRefusal(run.config)) throw InputError(why->message);
  if (!config_.getString("save_precision").empty()) saveDtype_ = network::savePrecisionDtype(config_.getString("save_precision"));
}

void FullWeightsMethod::attach(FamilyPart& family) {
  family_ = &family;
  const double lr = config_.getDouble("learning_rate");
  // sdxl_train.py / sd3_train.py: learning_rate_te1 / te2 (/ te3, SD 3.x's T5-XXL), each defaulting to learning_rate.
  const std::optional<double> teLr[3] = {optionalDouble(config_, "learning_rate_te1"), optionalDouble(config_, "learning_rate_te2"),
                                         optionalDouble(config_, "learning_rate_te3")};
  // block_lr (sdxl_train.py): the denoiser's parameters in one group per block, at the block's rate.
  const std::string blockLrText = config_.getString("block_lr");
  std::vector<double> blockLrs;
  const FamilyRegistration* registration = config_.family() ? findRegisteredFamily(*config_.family()) : nullptr;
  if (!blockLrText.empty()) {
    if (!registration || registration->blockLrCount == 0)
      throw InputError("block_lr: " + family.facts().familyName + " has no per-block learning rates (sdxl_train.py's option)");
    blockLrs = parseBlockLearningRates(blockLrText, static_cast<size_t>(registration->blockLrCount));
    if (lr == 0) spdlog::warn("block_lr is not used: learning_rate is 0, so the U-Net does not train (as sdxl_train.py)");
  }
  int textEncoder = 0;
  int64_t count = 0;
  for (const TrainableModel& model : family.trainableModels()) {
    const bool trains = !model.textEncoder || trainTextEncoders_;
    const double groupLr = model.textEncoder ? teLr[std::min(textEncoder, 2)].value_or(lr) : lr;
    if (model.textEncoder) ++textEncoder;
    if (!trains) continue;
    if (!model.textEncoder && !blockLrs.empty() && lr != 0) {
      std::vector<OptimizerGroup> blocks(blockLrs.size());
      for (size_t b = 0; b < blocks.size(); ++b) blocks[b] = OptimizerGroup{model.label + " block" + std::to_string(b), blockLrs[b], {}};
      for (const auto& p : model.module->named_parameters(/*recurse=*/true)) {
        torch::Tensor param = p.value();
        const size_t b = static_cast<size_t>(registration->blockLrIndex(p.key()));
        param.set_requires_grad(blockLrs[b] > 0);  // sd-scripts leaves a block of rate 0 out of the optimizer
        blocks[b].params.push_back(param);
        if (blockLrs[b] > 0) trained_.emplace_back(model.label + "/" + p.key(), param), count += param.numel();
      }
      for (OptimizerGroup& g : blocks)
        if (g.lr > 0 && !g.params.empty()) groups_.push_back(std::move(g));
      continue;
    }
    OptimizerGroup group{model.label, groupLr, {}};
    for (const auto& p : model.module->named_parameters(/*recurse=*/true)) {
      torch::Tensor param = p.value();
      param.set_requires_grad(true);
      group.params.push_back(param);
      trained_.emplace_back(model.label + "/" + p.key(), param);
      count += param.numel();
    }
    if (groupLr > 0) groups_.push_back(std::move(group));
    else for (auto& t : group.params) t.set_requires_grad(false);  // sd-scripts: a learning rate of 0 freezes it
  }
  if (groups_.empty()) throw InputError("nothing to train: every model's learning rate is 0");
  if (float32Masters_) useFloat32Masters(family);
  std::string what;
  for (const OptimizerGroup& g : groups_) what += (what.empty() ? "" : ", ") + g.label + " (lr " + std::to_string(g.lr) + ")";
  spdlog::info("full weights: training {}: {} parameters", what, count);

  recordBaseModelFacts(family.facts(), facts_);
}

void FullWeightsMethod::useFloat32Masters(FamilyPart& family) {
  // The trainable models loaded in float32 (PrecisionPlan::float32Masters): what trains keeps its
  // values as float32 masters and computes through copies in the compute dtype, as autocast casts
  // sd-scripts' float32 weights; the rest is cast as a frozen model is.
  std::set<const void*> trained;
  for (const OptimizerGroup& g : groups_)
    for (const torch::Tensor& p : g.params) trained.insert(p.unsafeGetTensorImpl());
  std::vector<torch::Tensor> params;
  for (const TrainableModel& model : family.trainableModels()) {
    bool trains = false;
    for (const torch::Tensor& p : model.module->parameters()) trains |= trained.count(p.unsafeGetTensorImpl()) > 0;
    if (!trains) {
      castFrozen(*model.module, computeDtype_);
      continue;
    }
    torch::NoGradGuard noGrad;
    for (torch::Tensor& b : model.module->buffers())
      if (b.is_floating_point() && b.scalar_type() != computeDtype_) b.set_data(b.data().to(computeDtype_));
    for (const torch::Tensor& p : model.module->parameters())
      if (p.is_floating_point()) params.push_back(p);
  }
  copies_ = ComputeCopies::ofParameters(params, computeDtype_);
  // The optimizer, resume and saving see the masters from now on.
  std::map<const void*, torch::Tensor> masterOf;
  for (size_t i = 0; i < params.size(); ++i) masterOf[copies_->copyOf(i).unsafeGetTensorImpl()] = copies_->masters()[i];
  for (OptimizerGroup& g : groups_)
    for (torch::Tensor& p : g.params) p = masterOf.at(p.unsafeGetTensorImpl());
  for (auto& [name, t] : trained_) t = masterOf.at(t.unsafeGetTensorImpl());
  spdlog::info("mixed precision: the trained weights are float32 masters, computed through {} copies (sdxl_train.py's "
               "float32 weights under autocast)", c10::toString(computeDtype_));
}

void FullWeightsMethod::describeRun(const data::Dataset& dataset, long long, long long, long long, int) {
  if (!dataset.datasets.empty())
    facts_.resolution = std::make_pair(dataset.datasets.front().buckets.resolution.width, dataset.datasets.front().buckets.resolution.height);
}

void FullWeightsMethod::saveModel(const std::string& path, const SaveStamp& stamp) {
  const network::OptionLookup lookup = [&](const std::string& key) { return configOptionAsJson(config_, key); };
  network::Metadata metadata = network::buildModelSpec(lookup, facts_, network::unixTimeNow(), /*lora=*/false);
  // sd-scripts' checkpoints carry no step; a save_best_k file carries its validation loss.
  for (const auto& [key, value] : stamp.sinterMetadata()) metadata[key] = value;
  settleSwappedWeights();
  // With float32 masters the models show them while the file is written: saved at full precision.
  struct ShowMasters {
    ComputeCopies* copies;
    explicit ShowMasters(ComputeCopies* c) : copies(c) {
      if (copies) copies->showMasters();
    }
    ~ShowMasters() {
      if (copies) copies->showCopies();
    }
  } showMasters(copies_.get());
  const std::vector<std::pair<std::string, torch::Tensor>> tensors = family_->checkpointTensors();
  // Streamed, one tensor on the host at a time: a full checkpoint does not fit in memory twice.
  std::vector<io::TensorDeclaration> entries;
  for (const auto& [key, t] : tensors)
    entries.push_back({key, t.is_floating_point() && saveDtype_ ? *saveDtype_ : t.scalar_type(), t.sizes().vec()});
  io::writeSafetensorsStreaming(path, entries, metadata, [&](size_t i) {
    return tensors[i].second.detach().to(torch::kCPU, entries[i].dtype).contiguous();
  });
}

void FullWeightsMethod::settleSwappedWeights() const {
  for (const auto& swap : family_->blockSwaps()) swap->synchronize();
}

NamedTensors FullWeightsMethod::stateTensors() const {
  settleSwappedWeights();
  NamedTensors out;
  for (const auto& [name, t] : trained_) out.emplace_back(name, t.detach());
  return out;
}

void FullWeightsMethod::loadStateTensors(const NamedTensors& tensors, const std::string& source) {
  std::map<std::string, torch::Tensor> byName(tensors.begin(), tensors.end());
  torch::NoGradGuard noGrad;
  for (auto& [name, t] : trained_) {
    auto it = byName.find(name);
    if (it == byName.end())
      throw InputError("resume: the state in '" + source + "' lacks " + name + "; was it saved by another kind of run?");
    if (it->second.sizes() != t.sizes())
      throw InputError("resume: " + name + " in '" + source + "' is " + c10::str(it->second.sizes()) + ", the model's is " +
                       c10::str(t.sizes()));
    t.copy_(it->second);
  }
  trainedWeightsChanged();
}

void FullWeightsMethod::trainedWeightsChanged() {
  if (copies_) copies_->refresh();
  // Swapped blocks' masters were written: the ring loads them again.
  for (const auto& swap : family_->blockSwaps()) swap->forgetLoadedBlocks();
}

}  // namespace sinter::train

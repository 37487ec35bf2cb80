#include "train/methods/textual_inversion_method.h"

#include <spdlog/spdlog.h>

#include <map>

#include "network/lora_file.h"
#include "train/base/run_errors.h"
#include "train/methods/base_model_facts.h"
#include "train/methods/embedding_file.h"
#include "train/methods/embedding_rows.h"
#include "train/methods/embedding_tokens.h"
#include "train/methods/lora_method.h"

namespace sinter::train {

TextualInversionMethod::TextualInversionMethod(const RunContext& run)
    : config_(run.config), options_(TextualInversionOptions::fromConfig(run.config)), device_(run.device), dtype_(run.precision.loraDtype) {
  if (const auto why = textualInversionRefusal(run.config)) throw InputError(why->message);
  if (options_.savePrecision) saveDtype_ = network::savePrecisionDtype(*options_.savePrecision);
}

void TextualInversionMethod::attach(FamilyPart& family) {
  const TextualInversionTargets targets = family.textualInversionTargets();
  if (!targets.tokenizer || targets.encoders.empty())
    throw InputError("textual_inversion: " + family.facts().familyName + " has no text encoder to train embeddings for");
  // Nothing of the models trains: only the rows made here.
  for (const TrainableModel& model : family.trainableModels())
    for (torch::Tensor p : model.module->parameters()) p.set_requires_grad(false);

  text::ClipTokenizer& tokenizer = *targets.tokenizer;
  // init_word's ids before the new tokens exist.
  const std::vector<int32_t> initIds = initWordIds(tokenizer, options_.initWord, options_.captions.vectors);
  const AddedEmbeddingTokens added =
      addEmbeddingTokens(targets, {data::textualInversionTokens(options_.captions.tokenString, options_.captions.vectors)}, "token_string")
          .front();
  const std::vector<int32_t>& ids = added.ids;
  fileLayout_ = added.layout;
  std::vector<torch::Tensor> loaded;
  if (!options_.weightsFile.empty()) loaded = readEmbeddingFile(options_.weightsFile, fileLayout_);
  for (size_t i = 0; i < targets.encoders.size(); ++i) {
    const TokenEmbeddingTarget& t = targets.encoders[i];
    torch::Tensor rows = loaded.empty() ? initialEmbeddingRows(t.encoder->tokenEmbedding()->weight, initIds, options_.captions.vectors) : loaded[i];
    rows = rows.to(device_, dtype_).detach().clone();
    rows.set_requires_grad(true);
    t.encoder->setAddedTokenEmbeddings(rows);
    keys_.push_back(t.fileKey);
    rows_.push_back(rows);
  }
  std::string widths;
  for (size_t i = 0; i < rows_.size(); ++i) widths += (i ? ", " : "") + keys_[i] + " " + std::to_string(rows_[i].size(1));
  spdlog::info("textual inversion: {} tokens ({}), ids {}-{}, {} rows each ({}){}", ids.size(), options_.captions.joinedTokens(),
               ids.front(), ids.back(), options_.captions.vectors, widths,
               options_.weightsFile.empty() ? (options_.initWord.empty() ? ", from the vocabulary's mean embedding"
                                                                         : ", from \"" + options_.initWord + "\"")
                                            : ", from " + options_.weightsFile);

  recordBaseModelFacts(family.facts(), facts_);
}

std::vector<OptimizerGroup> TextualInversionMethod::parameterGroups() const {
  // sd-scripts' one optimizer over the encoders' embeddings, at learning_rate.
  if (options_.learningRate <= 0) throw InputError("nothing to train: learning_rate is 0");
  return {OptimizerGroup{"Textual Inversion", options_.learningRate, rows_}};
}

void TextualInversionMethod::describeRun(const data::Dataset& dataset, long long, long long, long long, int) {
  if (!dataset.datasets.empty())
    facts_.resolution = std::make_pair(dataset.datasets.front().buckets.resolution.width, dataset.datasets.front().buckets.resolution.height);
}

void TextualInversionMethod::saveModel(const std::string& path, const SaveStamp& stamp) {
  const network::OptionLookup lookup = [&](const std::string& key) { return configOptionAsJson(config_, key); };
  network::Metadata metadata = network::buildTextualInversionModelSpec(lookup, facts_, network::unixTimeNow());
  for (const auto& [key, value] : stamp.sinterMetadata()) metadata[key] = value;
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (size_t i = 0; i < rows_.size(); ++i) tensors.emplace_back(keys_[i], rows_[i]);
  writeEmbeddingFile(path, tensors, saveDtype_, metadata);
}

void TextualInversionMethod::putRows(const std::vector<torch::Tensor>& rows) {
  if (rows.size() != rows_.size())
    throw std::invalid_argument("textual inversion: " + std::to_string(rows.size()) + " row tensors for " + std::to_string(rows_.size()) +
                                " text encoders");
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < rows_.size(); ++i) rows_[i].copy_(rows[i]);
}

NamedTensors TextualInversionMethod::stateTensors() const {
  NamedTensors out;
  for (size_t i = 0; i < rows_.size(); ++i) out.emplace_back("textual_inversion/" + keys_[i], rows_[i].detach());
  return out;
}

void TextualInversionMethod::loadStateTensors(const NamedTensors& tensors, const std::string& source) {
  std::map<std::string, torch::Tensor> byName(tensors.begin(), tensors.end());
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const std::string name = "textual_inversion/" + keys_[i];
    const auto it = byName.find(name);
    if (it == byName.end())
      throw InputError("resume: the state in '" + source + "' lacks " + name + "; was it saved by another kind of run?");
    if (it->second.sizes() != rows_[i].sizes())
      throw InputError("resume: " + name + " in '" + source + "' is " + c10::str(it->second.sizes()) + ", this run's is " +
                       c10::str(rows_[i].sizes()) + " (num_vectors_per_token x the text encoder's width)");
    rows_[i].copy_(it->second);
  }
}

}  // namespace sinter::train

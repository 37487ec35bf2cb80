#include "train/methods/pivotal_embeddings.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <map>

#include "core/value.h"
#include "io/safetensors.h"
#include "text/bundled_tokenizers.h"
#include "text/clip_tokenizer.h"
#include "train/base/config_values.h"
#include "train/base/run_errors.h"
#include "train/methods/embedding_file.h"
#include "train/methods/embedding_rows.h"
#include "train/methods/embedding_tokens.h"
#include "train/methods/lora_method.h"

namespace sinter::train {

std::optional<Refusal> pivotalEmbeddingsRefusal(const Config& config, bool familyTrainsEmbeddings) {
  std::vector<data::PivotalEmbeddingSpec> specs;
  try {
    specs = data::pivotalEmbeddingSpecs(config);
  } catch (const std::invalid_argument& e) {
    return Refusal{"embeddings", e.what()};
  }
  if (specs.empty()) return std::nullopt;
  if (!familyTrainsEmbeddings)
    return Refusal{"embeddings", "embeddings: pivotal tuning trains CLIP token embeddings, which " +
                                     (config.family() ? std::string(toString(*config.family())) : std::string("this family")) +
                                     " is not built for (SD 1.x, SD 2.x and SDXL have it, as textual inversion): remove embeddings"};
  for (const char* key : {"cache_text_encoder_outputs", "cache_text_encoder_outputs_to_disk"})
    if (config.getBool(key))
      return Refusal{key, std::string(key) + ": the embeddings train the text encoders' rows of their tokens, so the encoders' outputs "
                          "change every step: set it to false, or remove embeddings"};
  const text::ClipTokenizer tokenizer =
      text::ClipTokenizer::fromPath(text::tokenizerFolder("clip_tokenizer", config.getString("clip_tokenizer"), "clip"));
  for (const data::PivotalEmbeddingSpec& s : specs)
    for (const std::string& token : s.tokens())
      if (tokenizer.hasToken(token))
        return Refusal{"embeddings", "embeddings: the tokenizer already has the token \"" + token + "\" (" + tokenizer.source() +
                                         "); choose a token_string it does not have, as textual inversion requires"};
  return std::nullopt;
}

std::string bundledEmbeddingKey(const std::string& tokenString, const std::string& fileKey) {
  // A1111's create_embedding_from_data: SD 1.x/2.x's one tensor under string_to_param (its own
  // embeddings' "*"), SDXL's under clip_l and clip_g.
  return "bundle_emb." + tokenString + "." + (fileKey == "emb_params" ? "string_to_param.*" : fileKey);
}

std::string pivotalEmbeddingFilePath(const std::string& loraPath, const std::string& tokenString) {
  const std::filesystem::path p(loraPath);
  return (p.parent_path() / (p.stem().string() + "_" + tokenString + ".safetensors")).string();
}

PivotalEmbeddings::PivotalEmbeddings(const RunContext& run, std::vector<data::PivotalEmbeddingSpec> specs)
    : config_(run.config),
      device_(run.device),
      dtype_(run.precision.loraDtype),
      defaultLr_(optionalDouble(run.config, "text_encoder_lr").value_or(run.config.getDouble("learning_rate"))),
      specs_(std::move(specs)) {}

std::vector<std::string> PivotalEmbeddings::attach(FamilyPart& family, const std::string& networkWeightsFile) {
  const TextualInversionTargets targets = family.textualInversionTargets();
  if (!targets.tokenizer || targets.encoders.empty())
    throw InputError("embeddings: " + family.facts().familyName + " has no text encoder to train embeddings for");
  text::ClipTokenizer& tokenizer = *targets.tokenizer;
  // Every init_word is read before any new token exists, as each would be in its own TI run.
  std::vector<std::vector<int32_t>> initIds;
  for (const data::PivotalEmbeddingSpec& s : specs_) initIds.push_back(initWordIds(tokenizer, s.initWord, s.vectors));
  std::vector<std::vector<std::string>> tokens;
  for (const data::PivotalEmbeddingSpec& s : specs_) tokens.push_back(s.tokens());
  const std::vector<AddedEmbeddingTokens> added = addEmbeddingTokens(targets, tokens, "embeddings");
  std::vector<std::vector<torch::Tensor>> parts(targets.encoders.size());
  // network_weights' LoRA file: the rows it bundles for this run's tokens, read as the checkpoint grid reads them.
  std::optional<io::SafetensorsFile> bundles;
  if (!networkWeightsFile.empty()) bundles.emplace(networkWeightsFile);
  std::vector<std::string> bundleKeysTaken;
  for (size_t e = 0; e < specs_.size(); ++e) {
    const data::PivotalEmbeddingSpec& s = specs_[e];
    const std::vector<int32_t>& ids = added[e].ids;
    Embedding emb{s, {}, {}};
    std::vector<ExpectedEmbedding> bundled = added[e].layout;
    bool isBundled = false;
    for (ExpectedEmbedding& b : bundled) {
      b.key = bundledEmbeddingKey(s.tokenString, b.key);
      if (bundles && bundles->has(b.key)) {
        isBundled = true;
        bundleKeysTaken.push_back(b.key);
      }
    }
    std::vector<torch::Tensor> loaded;
    std::string from = s.initWord.empty() ? ", from the vocabulary's mean embedding" : ", from \"" + s.initWord + "\"";
    if (!s.weightsFile.empty()) {
      loaded = readEmbeddingFile(s.weightsFile, added[e].layout);
      from = ", from " + s.weightsFile;
      if (isBundled) from += " (its weights win over the rows network_weights' " + networkWeightsFile + " bundles)";
    } else if (isBundled) {
      loaded = readEmbeddingFile(networkWeightsFile, bundled, EmbeddingFileReading{"network_weights", false});
      from = ", from the rows network_weights' " + networkWeightsFile + " bundles";
    } else if (bundles) {
      from += " (network_weights' " + networkWeightsFile + " bundles no rows for it)";
    }
    for (size_t i = 0; i < targets.encoders.size(); ++i) {
      const TokenEmbeddingTarget& t = targets.encoders[i];
      torch::Tensor rows = loaded.empty() ? initialEmbeddingRows(t.encoder->tokenEmbedding()->weight, initIds[e], s.vectors) : loaded[i];
      rows = rows.to(device_, dtype_).detach().clone();
      rows.set_requires_grad(true);
      emb.keys.push_back(t.fileKey);
      emb.rows.push_back(rows);
      parts[i].push_back(rows);
    }
    spdlog::info("pivotal tuning: embedding \"{}\", {} tokens, ids {}-{}{}", s.tokenString, s.vectors, ids.front(), ids.back(), from);
    embeddings_.push_back(std::move(emb));
  }
  // The encoders read each embedding's rows in id order (ClipTextTransformer joins them).
  for (size_t i = 0; i < targets.encoders.size(); ++i) targets.encoders[i].encoder->setAddedTokenEmbeddings(parts[i]);
  return bundleKeysTaken;
}

std::vector<OptimizerGroup> PivotalEmbeddings::parameterGroups() const {
  std::vector<OptimizerGroup> groups;
  for (const Embedding& e : embeddings_) {
    const double lr = e.spec.learningRate.value_or(defaultLr_);
    if (lr <= 0) {
      spdlog::warn("embeddings: \"{}\" has a learning rate of 0 and does not train", e.spec.tokenString);
      continue;
    }
    groups.push_back(OptimizerGroup{"Embedding " + e.spec.tokenString, lr, e.rows});
  }
  return groups;
}

std::vector<std::pair<std::string, torch::Tensor>> PivotalEmbeddings::bundleTensors(torch::Dtype dtype) const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const Embedding& e : embeddings_)
    for (size_t i = 0; i < e.rows.size(); ++i)
      out.emplace_back(bundledEmbeddingKey(e.spec.tokenString, e.keys[i]), e.rows[i].detach().to(torch::kCPU, dtype).contiguous());
  return out;
}

std::vector<ExpectedEmbedding> PivotalEmbeddings::bundleLayout() const {
  std::vector<ExpectedEmbedding> layout;
  for (const Embedding& e : embeddings_)
    for (size_t i = 0; i < e.rows.size(); ++i) layout.push_back({bundledEmbeddingKey(e.spec.tokenString, e.keys[i]), e.rows[i].sizes().vec()});
  return layout;
}

void PivotalEmbeddings::putRows(const std::vector<torch::Tensor>& rows) {
  size_t n = 0;
  for (const Embedding& e : embeddings_) n += e.rows.size();
  if (rows.size() != n)
    throw std::invalid_argument("embeddings: " + std::to_string(rows.size()) + " row tensors for " + std::to_string(n) +
                                " (each embedding's on each text encoder)");
  torch::NoGradGuard noGrad;
  size_t next = 0;
  for (Embedding& e : embeddings_)
    for (torch::Tensor& r : e.rows) r.copy_(rows[next++]);
}

void PivotalEmbeddings::saveApart(const std::string& loraPath, torch::Dtype dtype, const network::LoraRunFacts& facts) const {
  const network::OptionLookup lookup = [&](const std::string& key) { return configOptionAsJson(config_, key); };
  for (const Embedding& e : embeddings_) {
    network::Metadata metadata = network::buildTextualInversionModelSpec(lookup, facts, network::unixTimeNow());
    metadata["modelspec.title"] = e.spec.tokenString;
    std::vector<std::pair<std::string, torch::Tensor>> tensors;
    for (size_t i = 0; i < e.rows.size(); ++i) tensors.emplace_back(e.keys[i], e.rows[i]);
    writeEmbeddingFile(pivotalEmbeddingFilePath(loraPath, e.spec.tokenString), tensors, dtype, metadata);
  }
}

std::vector<std::string> PivotalEmbeddings::filePathsApart(const std::string& loraPath) const {
  std::vector<std::string> paths;
  for (const data::PivotalEmbeddingSpec& s : specs_) paths.push_back(pivotalEmbeddingFilePath(loraPath, s.tokenString));
  return paths;
}

NamedTensors PivotalEmbeddings::stateTensors() const {
  NamedTensors out;
  for (const Embedding& e : embeddings_)
    for (size_t i = 0; i < e.rows.size(); ++i) out.emplace_back("pivotal_embeddings/" + e.spec.tokenString + "/" + e.keys[i], e.rows[i].detach());
  return out;
}

void PivotalEmbeddings::loadStateTensors(const NamedTensors& tensors, const std::string& source) {
  const std::map<std::string, torch::Tensor> byName(tensors.begin(), tensors.end());
  torch::NoGradGuard noGrad;
  for (Embedding& e : embeddings_)
    for (size_t i = 0; i < e.rows.size(); ++i) {
      const std::string name = "pivotal_embeddings/" + e.spec.tokenString + "/" + e.keys[i];
      const auto it = byName.find(name);
      if (it == byName.end())
        throw InputError("resume: the state in '" + source + "' lacks " + name + "; was it saved with other embeddings?");
      if (it->second.sizes() != e.rows[i].sizes())
        throw InputError("resume: " + name + " in '" + source + "' is " + c10::str(it->second.sizes()) + ", this run's is " +
                         c10::str(e.rows[i].sizes()) + " (num_vectors_per_token x the text encoder's width)");
      e.rows[i].copy_(it->second);
    }
}

}  // namespace sinter::train

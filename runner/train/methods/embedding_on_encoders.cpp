#include "train/methods/embedding_on_encoders.h"

#include <spdlog/spdlog.h>

#include <string>

#include "core/value.h"
#include "data/textual_inversion_captions.h"
#include "text/bundled_tokenizers.h"
#include "train/base/module_inputs.h"
#include "train/base/run_errors.h"
#include "train/methods/embedding_file.h"
#include "train/methods/embedding_tokens.h"

namespace sinter::train {

std::vector<int32_t> putEmbeddingOnEncoders(const TextualInversionTargets& targets, const Config& config) {
  const data::TextualInversionCaptions captions = data::TextualInversionCaptions::fromConfig(config);
  const std::string weights = config.getString("weights");
  if (captions.tokenString.empty())
    throw InputError("token_string is not set: the embedding's rows are the rows of its tokens (token_string, token_string1, ...)");
  if (weights.empty()) throw InputError("weights is not set: the embedding file whose rows the tokens of token_string take");
  if (!targets.tokenizer || targets.encoders.empty())
    throw InputError("textual inversion: this family has no text encoder for an embedding");
  const AddedEmbeddingTokens added =
      addEmbeddingTokens(targets, {data::textualInversionTokens(captions.tokenString, captions.vectors)}, "token_string").front();
  const std::vector<int32_t>& ids = added.ids;
  const std::vector<torch::Tensor> rows = readEmbeddingFile(weights, added.layout);
  for (size_t i = 0; i < targets.encoders.size(); ++i) {
    models::ClipTextTransformerImpl& encoder = *targets.encoders[i].encoder;
    encoder.setAddedTokenEmbeddings(rows[i].to(encoder.tokenEmbedding()->weight.device()));
  }
  spdlog::info("embedding {}: {} tokens ({}), ids {}-{}, on {} text encoder{}", weights, ids.size(), captions.joinedTokens(), ids.front(),
               ids.back(), targets.encoders.size(), targets.encoders.size() == 1 ? "" : "s");
  return ids;
}

void addEmbeddingAndPrompt(const Config& config, const ModuleInputs& inputs,
                           const std::function<TextualInversionTargets(text::ClipTokenizer&)>& targets,
                           const PromptTokenIds& promptIds, std::map<std::string, torch::Tensor>& tensors, ModuleOutputs& out) {
  const bool embedding = !config.getString("weights").empty();
  if (!embedding && !inputs.prompt) return;
  text::ClipTokenizer tokenizer =
      text::ClipTokenizer::fromPath(text::tokenizerFolder("clip_tokenizer", config.getString("clip_tokenizer"), "clip"));
  if (embedding) {
    putEmbeddingOnEncoders(targets(tokenizer), config);
    out.metadata.emplace_back("weights", config.getString("weights"));
  }
  if (!inputs.prompt) return;
  const int maxTokenLength = isUnset(config.get("max_token_length")) ? 75 : static_cast<int>(config.getInt("max_token_length"));
  for (auto& [name, ids] : promptIds(tokenizer, *inputs.prompt, maxTokenLength)) {
    addPromptInput(tensors, name, ids);
    out.tensors.emplace_back(name, tensors.at(name));
  }
  out.metadata.emplace_back("prompt", *inputs.prompt);
}

}  // namespace sinter::train

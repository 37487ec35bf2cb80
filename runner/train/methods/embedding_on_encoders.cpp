#include "train/methods/embedding_on_encoders.h"

#include <spdlog/spdlog.h>

#include <string>

#include "data/textual_inversion_captions.h"
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

}  // namespace sinter::train

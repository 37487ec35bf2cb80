#include "train/methods/embedding_on_encoders.h"

#include <spdlog/spdlog.h>

#include <string>

#include "data/textual_inversion_captions.h"
#include "text/clip_tokenizer.h"
#include "train/base/run_errors.h"
#include "train/methods/embedding_file.h"

namespace sinter::train {

std::vector<int32_t> putEmbeddingOnEncoders(const TextualInversionTargets& targets, const Config& config) {
  const data::TextualInversionCaptions captions = data::TextualInversionCaptions::fromConfig(config);
  const std::string weights = config.getString("weights");
  if (captions.tokenString.empty())
    throw InputError("token_string is not set: the embedding's rows are the rows of its tokens (token_string, token_string1, ...)");
  if (weights.empty()) throw InputError("weights is not set: the embedding file whose rows the tokens of token_string take");
  if (!targets.tokenizer || targets.encoders.empty())
    throw InputError("textual inversion: this family has no text encoder for an embedding");
  text::ClipTokenizer& tokenizer = *targets.tokenizer;
  std::vector<int32_t> ids;
  try {
    ids = tokenizer.addTokens(data::textualInversionTokens(captions.tokenString, captions.vectors));
  } catch (const std::exception& e) {
    throw InputError(std::string("token_string: ") + e.what() + "; choose a string it does not have, as sd-scripts requires");
  }
  std::vector<ExpectedEmbedding> expected;
  for (const TokenEmbeddingTarget& t : targets.encoders) {
    const int64_t tableRows = t.encoder->tokenEmbedding()->weight.size(0);
    // The new ids follow the vocabulary, which must be the table's (sd-scripts' "token ids is not end of tokenize").
    if (tableRows != ids.front())
      throw InputError("token_string: the tokenizer (" + tokenizer.source() + ") ends at id " + std::to_string(ids.front() - 1) +
                       " but the " + t.fileKey + " text encoder's token table has " + std::to_string(tableRows) + " rows");
    expected.push_back({t.fileKey, {captions.vectors, t.encoder->tokenEmbedding()->weight.size(1)}});
  }
  const std::vector<torch::Tensor> rows = readEmbeddingFile(weights, expected);
  for (size_t i = 0; i < targets.encoders.size(); ++i) {
    models::ClipTextTransformerImpl& encoder = *targets.encoders[i].encoder;
    encoder.setAddedTokenEmbeddings(rows[i].to(encoder.tokenEmbedding()->weight.device()));
  }
  spdlog::info("embedding {}: {} tokens ({}), ids {}-{}, on {} text encoder{}", weights, ids.size(), captions.joinedTokens(), ids.front(),
               ids.back(), targets.encoders.size(), targets.encoders.size() == 1 ? "" : "s");
  return ids;
}

}  // namespace sinter::train

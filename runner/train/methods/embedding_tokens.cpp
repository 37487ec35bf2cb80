#include "train/methods/embedding_tokens.h"

#include <stdexcept>

#include "text/clip_tokenizer.h"
#include "train/base/run_errors.h"

namespace sinter::train {

std::vector<AddedEmbeddingTokens> addEmbeddingTokens(const TextualInversionTargets& targets,
                                                     const std::vector<std::vector<std::string>>& tokens, const std::string& option) {
  if (!targets.tokenizer || targets.encoders.empty())
    throw std::invalid_argument(option + ": no CLIP tokenizer and text encoder to add the tokens to");
  text::ClipTokenizer& tokenizer = *targets.tokenizer;
  std::vector<AddedEmbeddingTokens> out;
  for (const std::vector<std::string>& embeddingTokens : tokens) {
    if (embeddingTokens.empty()) throw std::invalid_argument(option + ": an embedding without tokens");
    AddedEmbeddingTokens added;
    try {
      added.ids = tokenizer.addTokens(embeddingTokens);
    } catch (const std::exception& e) {
      throw InputError(option + ": " + e.what() + "; choose a token_string it does not have");
    }
    for (const TokenEmbeddingTarget& t : targets.encoders) {
      const torch::Tensor& table = t.encoder->tokenEmbedding()->weight;
      // The first new id follows the vocabulary, which must be the table's; later embeddings'
      // ids follow the earlier ones', whose rows the encoders take after the table.
      if (out.empty() && table.size(0) != added.ids.front())
        throw InputError(option + ": the tokenizer (" + tokenizer.source() + ") ends at id " + std::to_string(added.ids.front() - 1) +
                         " but the " + t.fileKey + " text encoder's token table has " + std::to_string(table.size(0)) + " rows");
      added.layout.push_back({t.fileKey, {static_cast<int64_t>(added.ids.size()), table.size(1)}});
    }
    out.push_back(std::move(added));
  }
  return out;
}

}  // namespace sinter::train

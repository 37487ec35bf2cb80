#pragma once
// New tokens for embedding rows on a family's text encoders, added the one way textual inversion,
// pivotal tuning and an embedding put on the encoders to run them (--module_outputs) all need:
// each embedding's tokens (token_string, token_string1, ...) added to the CLIP tokenizer in order,
// each encoder's token table checked to end where the new ids start (sd-scripts' "token ids is not
// end of tokenize"), and each encoder's rows laid out ([vectors, width] under its file key). What
// the rows are (trained, a file's, a saved file's on the grid) is the caller's.
#include <cstdint>
#include <string>
#include <vector>

#include "train/methods/embedding_file.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// One embedding's tokens as the encoders take them.
struct AddedEmbeddingTokens {
  std::vector<int32_t> ids;               // its tokens' ids, in order
  std::vector<ExpectedEmbedding> layout;  // per encoder (targets.encoders' order): its file key and rows' shape [tokens, width]
};

// Adds `tokens` (each embedding's, in order) to targets.tokenizer and lays out each embedding's
// rows; the result is in `tokens`' order. `option` starts every message: the key that names the
// tokens ("token_string", "embeddings"). Throws InputError where the tokenizer has one of the
// tokens already, or an encoder's token table does not end where the first new id starts (a
// tokenizer of another model). `targets` has a tokenizer and encoders (the callers refuse a family
// without them by name first; std::invalid_argument otherwise), and every embedding a token.
std::vector<AddedEmbeddingTokens> addEmbeddingTokens(const TextualInversionTargets& targets,
                                                     const std::vector<std::vector<std::string>>& tokens, const std::string& option);

}  // namespace sinter::train

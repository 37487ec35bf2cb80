#pragma once
// Pivotal tuning's embeddings (a LoRA run that also trains embeddings for new tokens, OneTrainer's
// "additional embeddings"): the `embeddings` option's items, one per embedding, each a line of
// key=value pairs with textual inversion's keys (token_string, init_word, num_vectors_per_token,
// weights, learning_rate), a value in double quotes where it holds spaces:
//   embeddings = ["token_string=sks init_word=dog num_vectors_per_token=2 learning_rate=1e-3"]
// and the caption replacements their tokens need (data/textual_inversion_captions.h's rule).
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/caption.h"

namespace sinter::data {

struct PivotalEmbeddingSpec {
  std::string tokenString;                 // token_string (required)
  std::string initWord;                    // init_word; empty: the vocabulary's mean embedding
  int vectors = 1;                         // num_vectors_per_token, 1..75
  std::string weightsFile;                 // weights: an embedding file to continue from
  std::optional<double> learningRate;      // learning_rate; unset: text_encoder_lr, else learning_rate
  std::vector<std::string> tokens() const;  // token_string, token_string1, ...
};

// The config's `embeddings` items, parsed. Throws std::invalid_argument naming the item (1-based)
// and the key: an unknown key, a value that is no number or out of range, a missing token_string,
// a token with a space or a '.' (A1111 splits a LoRA's bundle_emb keys at '.'), a token two
// embeddings share.
std::vector<PivotalEmbeddingSpec> pivotalEmbeddingSpecs(const Config& config);

// What captions and sample prompts replace: each token_string of several vectors by its tokens.
std::vector<CaptionReplacement> pivotalCaptionReplacements(const std::vector<PivotalEmbeddingSpec>& specs);

}  // namespace sinter::data

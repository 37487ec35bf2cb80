#pragma once
// The CLIP BPE tokenizer (CLIP-L and OpenCLIP bigG share it): text cleaning, the CLIP
// pre-tokenizer, byte-level BPE with "</w>" end-of-word, and bos/eos ids from the vocabulary.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/byte_level_bpe.h"
#include "text/clip_vocabulary.h"

namespace sinter::text {

class ClipTokenizer {
 public:
  static constexpr int kContextLength = 77;  // positions of both SDXL text encoders

  explicit ClipTokenizer(ClipVocabulary vocabulary);
  // `path`: the clip_tokenizer option (see clip_vocabulary.h for what it may point to).
  static ClipTokenizer fromPath(const std::string& path);

  // Token ids of the text without start/end tokens, not truncated. Throws Utf8Error for text that
  // is not UTF-8.
  std::vector<int32_t> encode(const std::string& text) const;

  // Textual inversion (transformers' add_tokens, as sd-scripts calls it): each string becomes one
  // token, with the ids after the vocabulary's highest, in order. The text is split at them first
  // (the longest at each position, case-sensitive, before any cleaning), as the slow CLIPTokenizer
  // splits at its added tokens, and the rest is tokenized as before. Throws ClipTokenizerError
  // naming a string the vocabulary or the added tokens already have. Not thread-safe: add before
  // encoding from other threads.
  std::vector<int32_t> addTokens(const std::vector<std::string>& tokens);
  // Whether `token` is a vocabulary entry (vocab.json's key, exactly) or an added token.
  bool hasToken(const std::string& token) const;
  // The id the first added token gets: the vocabulary's highest id + 1 (49408 for CLIP's).
  int32_t firstAddedId() const { return bpe_->maxTokenId() + 1; }
  const std::vector<std::pair<std::string, int32_t>>& addedTokens() const { return added_; }

  int32_t bosId() const { return bosId_; }  // <|startoftext|>, 49406 in CLIP's vocabulary
  int32_t eosId() const { return eosId_; }  // <|endoftext|>, 49407
  const std::string& source() const { return source_; }

 private:
  std::shared_ptr<const ByteLevelBpe> bpe_;  // shared: copies of the tokenizer share the cache
  std::vector<std::pair<std::string, int32_t>> added_;  // addTokens': string and id
  // The text's ids without the added tokens' split (cleaning, pre-tokenizer, BPE).
  std::vector<int32_t> encodeVocabulary(const std::string& text) const;
  int32_t bosId_ = 0, eosId_ = 0;
  std::string source_;
};

}  // namespace sinter::text

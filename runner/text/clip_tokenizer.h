#pragma once
// The CLIP BPE tokenizer (CLIP-L and OpenCLIP bigG share it): text cleaning, the CLIP
// pre-tokenizer, byte-level BPE with "</w>" end-of-word, and bos/eos ids from the vocabulary.
#include <cstdint>
#include <memory>
#include <string>
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

  int32_t bosId() const { return bosId_; }  // <|startoftext|>, 49406 in CLIP's vocabulary
  int32_t eosId() const { return eosId_; }  // <|endoftext|>, 49407
  const std::string& source() const { return source_; }

 private:
  std::shared_ptr<const ByteLevelBpe> bpe_;  // shared: copies of the tokenizer share the cache
  int32_t bosId_ = 0, eosId_ = 0;
  std::string source_;
};

}  // namespace sinter::text

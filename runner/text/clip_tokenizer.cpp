#include "text/clip_tokenizer.h"

#include "text/clip_pretokenizer.h"
#include "text/clip_text_cleaning.h"
#include "text/utf8.h"

namespace sinter::text {

ClipTokenizer::ClipTokenizer(ClipVocabulary vocabulary) : source_(std::move(vocabulary.source)) {
  bpe_ = std::make_shared<const ByteLevelBpe>(std::move(vocabulary.tokenIds), vocabulary.merges);
  bosId_ = bpe_->tokenId("<|startoftext|>");
  eosId_ = bpe_->tokenId("<|endoftext|>");
  if (bosId_ < 0 || eosId_ < 0) {
    throw ClipTokenizerError(source_ + ": the vocabulary has no <|startoftext|> / <|endoftext|> tokens");
  }
}

ClipTokenizer ClipTokenizer::fromPath(const std::string& path) { return ClipTokenizer(loadClipVocabulary(path)); }

std::vector<int32_t> ClipTokenizer::encode(const std::string& text) const {
  std::vector<int32_t> ids;
  for (const std::u32string& piece : splitClipPieces(cleanClipText(text))) {
    // The special tokens written out in the text are the special tokens, not their characters.
    if (piece == U"<|startoftext|>") { ids.push_back(bosId_); continue; }
    if (piece == U"<|endoftext|>") { ids.push_back(eosId_); continue; }
    const std::vector<int32_t> pieceIds = bpe_->encodePiece(encodeUtf8(piece));
    ids.insert(ids.end(), pieceIds.begin(), pieceIds.end());
  }
  return ids;
}

}  // namespace sinter::text

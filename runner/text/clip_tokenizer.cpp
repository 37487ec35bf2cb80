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

std::vector<int32_t> ClipTokenizer::addTokens(const std::vector<std::string>& tokens) {
  std::vector<int32_t> ids;
  for (const std::string& token : tokens) {
    if (token.empty()) throw ClipTokenizerError("an added token is empty");
    if (hasToken(token))
      throw ClipTokenizerError("the tokenizer (" + source_ + ") already has the token \"" + token + "\"");
    const int32_t id = firstAddedId() + static_cast<int32_t>(added_.size());
    added_.emplace_back(token, id);
    ids.push_back(id);
  }
  return ids;
}

bool ClipTokenizer::hasToken(const std::string& token) const {
  if (bpe_->tokenId(token) >= 0) return true;
  for (const auto& entry : added_)
    if (entry.first == token) return true;
  return false;
}

std::vector<int32_t> ClipTokenizer::encode(const std::string& text) const {
  if (added_.empty()) return encodeVocabulary(text);
  // The text between added tokens is tokenized on its own, as transformers' Trie.split cuts it.
  std::vector<int32_t> ids;
  size_t pieceStart = 0, at = 0;
  auto flush = [&](size_t end) {
    const std::vector<int32_t> piece = encodeVocabulary(text.substr(pieceStart, end - pieceStart));
    ids.insert(ids.end(), piece.begin(), piece.end());
  };
  while (at < text.size()) {
    const std::pair<std::string, int32_t>* longest = nullptr;
    for (const auto& entry : added_)
      if (text.compare(at, entry.first.size(), entry.first) == 0 && (!longest || entry.first.size() > longest->first.size()))
        longest = &entry;
    if (!longest) {
      ++at;
      continue;
    }
    flush(at);
    ids.push_back(longest->second);
    at += longest->first.size();
    pieceStart = at;
  }
  flush(text.size());
  return ids;
}

std::vector<int32_t> ClipTokenizer::encodeVocabulary(const std::string& text) const {
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

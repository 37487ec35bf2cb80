#pragma once
// Byte-level BPE as CLIP uses it: a piece's UTF-8 bytes become printable stand-in characters
// (GPT-2's bytes_to_unicode table), the last symbol carries the "</w>" end-of-word marker, and
// the ranked merges are applied lowest rank first until none applies.
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sinter::text {

// The stand-in character (as UTF-8) for each byte value.
const std::vector<std::string>& byteSymbols();

class ByteLevelBpe {
 public:
  static constexpr const char* kEndOfWord = "</w>";

  ByteLevelBpe(std::unordered_map<std::string, int32_t> tokenIds,
               const std::vector<std::pair<std::string, std::string>>& merges);

  // Ids of one pre-tokenized piece (UTF-8). Throws std::runtime_error when the vocabulary lacks
  // a symbol the merges produce (an inconsistent vocab.json / merges.txt pair).
  std::vector<int32_t> encodePiece(const std::string& utf8Piece) const;

  // Id of a whole vocabulary entry, or -1.
  int32_t tokenId(const std::string& token) const;
  // The highest id of the vocabulary (49407 in CLIP's: <|endoftext|>).
  int32_t maxTokenId() const { return maxTokenId_; }

 private:
  std::unordered_map<std::string, int32_t> tokenIds_;
  int32_t maxTokenId_ = -1;
  std::unordered_map<std::string, int32_t> mergeRanks_;  // key: first + ' ' + second
  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace sinter::text

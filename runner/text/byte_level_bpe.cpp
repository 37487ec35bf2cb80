#include "text/byte_level_bpe.h"

#include <algorithm>

#include <limits>
#include <stdexcept>

#include "text/utf8.h"

namespace sinter::text {

const std::vector<std::string>& byteSymbols() {
  // Printable bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves; the other 68 bytes are
  // given the code points from 256 upwards, in byte order.
  static const std::vector<std::string> symbols = [] {
    std::vector<std::string> out(256);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      appendUtf8(out[b], printable ? static_cast<char32_t>(b) : next++);
    }
    return out;
  }();
  return symbols;
}

ByteLevelBpe::ByteLevelBpe(std::unordered_map<std::string, int32_t> tokenIds,
                           const std::vector<std::pair<std::string, std::string>>& merges)
    : tokenIds_(std::move(tokenIds)) {
  for (const auto& entry : tokenIds_) maxTokenId_ = std::max(maxTokenId_, entry.second);
  mergeRanks_.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    // A repeated pair keeps its last rank, as dict(zip(merges, range(n))) does.
    mergeRanks_[merges[rank].first + ' ' + merges[rank].second] = static_cast<int32_t>(rank);
  }
}

int32_t ByteLevelBpe::tokenId(const std::string& token) const {
  const auto it = tokenIds_.find(token);
  return it == tokenIds_.end() ? -1 : it->second;
}

std::vector<int32_t> ByteLevelBpe::encodePiece(const std::string& piece) const {
  {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    const auto it = cache_.find(piece);
    if (it != cache_.end()) return it->second;
  }
  std::vector<std::string> symbols;
  symbols.reserve(piece.size());
  for (unsigned char byte : piece) symbols.push_back(byteSymbols()[byte]);
  if (symbols.empty()) return {};
  symbols.back() += kEndOfWord;

  while (symbols.size() > 1) {
    int32_t bestRank = std::numeric_limits<int32_t>::max();
    std::size_t bestIndex = 0;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto it = mergeRanks_.find(symbols[i] + ' ' + symbols[i + 1]);
      if (it != mergeRanks_.end() && it->second < bestRank) {
        bestRank = it->second;
        bestIndex = i;
      }
    }
    if (bestRank == std::numeric_limits<int32_t>::max()) break;
    const std::string first = symbols[bestIndex], second = symbols[bestIndex + 1];
    // Merge every non-overlapping occurrence of the best pair, left to right.
    std::vector<std::string> merged;
    merged.reserve(symbols.size());
    for (std::size_t i = 0; i < symbols.size();) {
      if (i + 1 < symbols.size() && symbols[i] == first && symbols[i + 1] == second) {
        merged.push_back(first + second);
        i += 2;
      } else {
        merged.push_back(symbols[i]);
        ++i;
      }
    }
    symbols.swap(merged);
  }

  std::vector<int32_t> ids;
  ids.reserve(symbols.size());
  for (const auto& symbol : symbols) {
    const int32_t id = tokenId(symbol);
    if (id < 0) {
      throw std::runtime_error("CLIP tokenizer vocabulary has no entry for the BPE symbol '" + symbol +
                               "' (vocab and merges do not belong together)");
    }
    ids.push_back(id);
  }
  std::lock_guard<std::mutex> lock(cacheMutex_);
  if (cache_.size() > 100000) cache_.clear();  // bound memory on endless distinct captions
  cache_.emplace(piece, ids);
  return ids;
}

}  // namespace sinter::text

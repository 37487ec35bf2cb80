#include "text/clip_pretokenizer.h"

#include "text/unicode.h"

namespace sinter::text {

namespace {

bool startsWithAt(const std::u32string& text, std::size_t pos, const std::u32string& prefix) {
  return text.compare(pos, prefix.size(), prefix) == 0;
}

// Length of the contraction ('s, 't, 're, 've, 'm, 'll, 'd) starting at pos, or 0.
std::size_t contractionLength(const std::u32string& text, std::size_t pos) {
  static const std::u32string kContractions[] = {U"'s", U"'t", U"'re", U"'ve", U"'m", U"'ll", U"'d"};
  for (const auto& contraction : kContractions) {
    if (startsWithAt(text, pos, contraction)) return contraction.size();
  }
  return 0;
}

bool isOther(char32_t cp) { return !isWhiteSpace(cp) && !isLetter(cp) && !isNumber(cp); }

}  // namespace

std::vector<std::u32string> splitClipPieces(const std::u32string& text) {
  static const std::u32string kSpecial[] = {U"<|startoftext|>", U"<|endoftext|>"};
  std::vector<std::u32string> pieces;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t length = 0;
    for (const auto& special : kSpecial) {
      if (startsWithAt(text, pos, special)) length = special.size();
    }
    if (length == 0) length = contractionLength(text, pos);
    if (length == 0) {
      const char32_t cp = text[pos];
      if (isLetter(cp)) {
        while (pos + length < text.size() && isLetter(text[pos + length])) ++length;
      } else if (isNumber(cp)) {
        length = 1;
      } else if (isOther(cp)) {
        while (pos + length < text.size() && isOther(text[pos + length])) ++length;
      }
    }
    if (length == 0) {  // white space separates pieces and is not part of any
      ++pos;
      continue;
    }
    pieces.push_back(text.substr(pos, length));
    pos += length;
  }
  return pieces;
}

}  // namespace sinter::text

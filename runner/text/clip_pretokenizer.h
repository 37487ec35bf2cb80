#pragma once
// CLIP's pre-tokenizer: the pieces that
//   <\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+
// finds in cleaned text (alternatives tried in that order at each position; white space between
// pieces is dropped). Letters and numbers are classified from the code points' Unicode categories.
#include <string>
#include <vector>

namespace sinter::text {

std::vector<std::u32string> splitClipPieces(const std::u32string& cleanedText);

}  // namespace sinter::text

#pragma once
// The Unicode operations CLIP's text handling needs: the \p{L}, \p{N} and \s classes of its
// pre-tokenizer regex, Python's str.lower(), and NFC normalisation.
#include <string>

namespace sinter::text {

bool isLetter(char32_t cp);      // general category L*
bool isNumber(char32_t cp);      // general category N*
bool isWhiteSpace(char32_t cp);  // Python's str.isspace()

std::u32string toLower(const std::u32string& text);  // full mapping, as Python's str.lower()
std::u32string normalizeNfc(const std::u32string& text);

}  // namespace sinter::text

#include "text/clip_text_cleaning.h"

#include <cstdlib>
#include <map>

#include "text/unicode.h"
#include "text/utf8.h"

namespace sinter::text {

namespace {

// ftfy's unescape_html: only when the text does not look like HTML markup ("auto"), and only
// for entities it knows; anything else stays as written.
std::u32string unescapeHtmlEntities(const std::u32string& text) {
  if (text.find(U'<') != std::u32string::npos) return text;
  static const std::map<std::u32string, char32_t> kNamed = {
      {U"amp", U'&'}, {U"lt", U'<'}, {U"gt", U'>'}, {U"quot", U'"'}, {U"apos", U'\''}, {U"nbsp", 0xA0},
      {U"AMP", U'&'}, {U"LT", U'<'}, {U"GT", U'>'}, {U"QUOT", U'"'}};
  std::u32string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == U'&') {
      const std::size_t semicolon = text.find(U';', i + 1);
      if (semicolon != std::u32string::npos && semicolon - i - 1 >= 1 && semicolon - i - 1 <= 24) {
        const std::u32string name = text.substr(i + 1, semicolon - i - 1);
        char32_t decoded = 0;
        if (name[0] == U'#' && name.size() > 1) {
          const bool hex = name[1] == U'x' || name[1] == U'X';
          const std::string digits(name.begin() + (hex ? 2 : 1), name.end());
          const bool valid = !digits.empty() && digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") ==
                                                    std::string::npos;
          if (valid && digits.size() <= 7) {
            const unsigned long value = std::strtoul(digits.c_str(), nullptr, hex ? 16 : 10);
            if (value > 0 && value <= 0x10FFFF && !(value >= 0xD800 && value <= 0xDFFF)) decoded = value;
          }
        } else {
          const auto it = kNamed.find(name);
          if (it != kNamed.end()) decoded = it->second;
        }
        if (decoded != 0) {
          out.push_back(decoded);
          i = semicolon;
          continue;
        }
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

// ftfy's fix_latin_ligatures.
const char32_t* latinLigature(char32_t cp) {
  switch (cp) {
    case 0x0132: return U"IJ";
    case 0x0133: return U"ij";
    case 0x0149: return U"\u02BCn";
    case 0x01C4: return U"D\u017D";
    case 0x01C5: return U"D\u017E";
    case 0x01C6: return U"d\u017E";
    case 0x01C7: return U"LJ";
    case 0x01C8: return U"Lj";
    case 0x01C9: return U"lj";
    case 0x01CA: return U"NJ";
    case 0x01CB: return U"Nj";
    case 0x01CC: return U"nj";
    case 0x01F1: return U"DZ";
    case 0x01F2: return U"Dz";
    case 0x01F3: return U"dz";
    case 0xFB00: return U"ff";
    case 0xFB01: return U"fi";
    case 0xFB02: return U"fl";
    case 0xFB03: return U"ffi";
    case 0xFB04: return U"ffl";
    case 0xFB05: return U"\u017Ft";
    case 0xFB06: return U"st";
    default: return nullptr;
  }
}

// ftfy's remove_control_chars: characters that carry no text.
bool isRemovedControl(char32_t cp) {
  return cp <= 0x08 || cp == 0x0B || (cp >= 0x0E && cp <= 0x1F) || cp == 0x7F || (cp >= 0x206A && cp <= 0x206F) ||
         cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFC) || (cp >= 0x1D173 && cp <= 0x1D17A) ||
         (cp >= 0xE0000 && cp <= 0xE007F);
}

char32_t fixCharacter(char32_t cp) {
  if (cp >= 0xFF01 && cp <= 0xFF5E) return cp - 0xFF01 + 0x21;  // full-width ASCII (fix_character_width)
  if (cp == 0x3000) return U' ';                                // ideographic space
  if (cp == 0x02BC || (cp >= 0x2018 && cp <= 0x201B)) return U'\'';  // uncurl_quotes
  if (cp >= 0x201C && cp <= 0x201F) return U'"';
  return cp;
}

}  // namespace

std::u32string cleanClipText(const std::string& utf8Text) {
  const std::u32string unescaped = unescapeHtmlEntities(decodeUtf8(utf8Text));
  std::u32string fixed;
  fixed.reserve(unescaped.size());
  for (char32_t cp : unescaped) {
    if (isRemovedControl(cp)) continue;
    if (const char32_t* ligature = latinLigature(cp)) {
      fixed.append(ligature);
      continue;
    }
    fixed.push_back(fixCharacter(cp));
  }
  const std::u32string normalized = normalizeNfc(fixed);

  // whitespace_clean: runs of white space become one space; the ends are stripped.
  std::u32string collapsed;
  collapsed.reserve(normalized.size());
  bool pendingSpace = false;
  for (char32_t cp : normalized) {
    if (isWhiteSpace(cp)) {
      pendingSpace = !collapsed.empty();
      continue;
    }
    if (pendingSpace) collapsed.push_back(U' ');
    pendingSpace = false;
    collapsed.push_back(cp);
  }
  return toLower(collapsed);
}

}  // namespace sinter::text
